package shard

import "reflect"

// Sum adds the counters of src to dst: every integer field, in nested
// structs and arrays too; maps of integers are added key by key (a nil
// map in dst is made). Other fields are left alone. It sums the
// statistics of workers without a method per type that a new counter
// could be forgotten in. Values documented as current ones (memory held
// now) add up to the total over the workers; peaks add up to a bound of
// the peak of the sum.
func Sum[T any](dst *T, src *T) {
	sum(reflect.ValueOf(dst).Elem(), reflect.ValueOf(src).Elem())
}

func sum(dst, src reflect.Value) {
	switch dst.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		dst.SetInt(dst.Int() + src.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		dst.SetUint(dst.Uint() + src.Uint())
	case reflect.Struct:
		for i := range dst.NumField() {
			if dst.Type().Field(i).IsExported() {
				sum(dst.Field(i), src.Field(i))
			}
		}
	case reflect.Array:
		for i := range dst.Len() {
			sum(dst.Index(i), src.Index(i))
		}
	case reflect.Map:
		if src.Len() == 0 {
			return
		}
		if dst.IsNil() {
			dst.Set(reflect.MakeMapWithSize(dst.Type(), src.Len()))
		}
		it := src.MapRange()
		for it.Next() {
			v := reflect.New(dst.Type().Elem()).Elem()
			if old := dst.MapIndex(it.Key()); old.IsValid() {
				v.Set(old)
			}
			sum(v, it.Value())
			dst.SetMapIndex(it.Key(), v)
		}
	}
}
