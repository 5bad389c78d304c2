package http

import (
	"reflect"
	"testing"
)

// TestRecordReset checks that reset clears every field of a record's
// Transaction, whichever of them were set: all of them with tail, and
// those before ResponseBodyLen, which a record without tail can hold.
func TestRecordReset(t *testing.T) {
	last := reflect.TypeFor[Transaction]().NumField()
	split := -1
	for i := range last {
		if reflect.TypeFor[Transaction]().Field(i).Name == "ResponseBodyLen" {
			split = i
		}
	}
	if split < 0 {
		t.Fatal("Transaction has no ResponseBodyLen")
	}
	for _, tt := range []struct {
		name string
		tail bool
		upTo int // fields [0, upTo) are set
	}{
		{"request fields", false, split},
		{"all fields", true, last},
	} {
		var r record
		r.tail = tt.tail
		v := reflect.ValueOf(&r.tx).Elem()
		for i := range tt.upTo {
			setNonZero(t, v.Field(i))
		}
		r.reset()
		if !reflect.DeepEqual(r.tx, Transaction{}) || r.tail {
			t.Errorf("%s: after reset, tail %v, Transaction %+v", tt.name, r.tail, r.tx)
		}
	}
}

func setNonZero(t *testing.T, f reflect.Value) {
	switch f.Kind() {
	case reflect.Int, reflect.Int64:
		f.SetInt(1)
	case reflect.Bool:
		f.SetBool(true)
	case reflect.Slice:
		f.Set(reflect.MakeSlice(f.Type(), 1, 1))
	default:
		t.Fatalf("a field of kind %v", f.Kind())
	}
}
