package logdiff_test

import (
	"fmt"
	"strings"

	"github.com/wirebench/wirebench/logdiff"
)

func ExampleCompare() {
	zeek := "#fields\tts\tuid\tid.orig_h\tid.orig_p\tid.resp_h\tid.resp_p\ttrans_depth\tmethod\turi\tstatus_code\n" +
		"XXXXXXXXXX.XXXXXX\tCHhAvVGS1DHFjwGM9\t10.0.0.1\t1025\t10.0.0.2\t80\t1\tGET\t/index.html\t200\n" +
		"XXXXXXXXXX.XXXXXX\tCHhAvVGS1DHFjwGM9\t10.0.0.1\t1025\t10.0.0.2\t80\t2\tGET\t/logo.png\t304\n"
	mine := `{"ts":1258535653.1,"uid":"C1","id.orig_h":"10.0.0.1","id.orig_p":1025,"id.resp_h":"10.0.0.2","id.resp_p":80,` +
		`"trans_depth":2,"method":"GET","uri":"/logo.png","status_code":200}` + "\n"
	s, _ := logdiff.SchemaFor("http.log")
	r, err := logdiff.Compare(s, logdiff.NewReader(strings.NewReader(zeek), "zeek/http.log"),
		logdiff.NewReader(strings.NewReader(mine), "mine/http.log"), logdiff.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Summary())
	st, _ := r.Field("status_code")
	fmt.Printf("status_code: %d of Zeek's %d records equal\n", st.Equal, r.ARecords)
	// Output:
	// agree   0.0 %  (1 differ: status_code 1; 1 missing)
	// status_code: 0 of Zeek's 2 records equal
}
