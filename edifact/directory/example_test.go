package directory_test

import (
	"fmt"

	"github.com/edihub/edihub/edifact"
	"github.com/edihub/edihub/edifact/directory"
)

// Validate each message of an interchange as edifact.Walk hands it over.
func ExampleValidator_Validate() {
	set, err := directory.Builtin() // once per process; share the Set
	if err != nil {
		panic(err)
	}
	v, _ := directory.NewValidator(set, nil) // lenient
	in := "UNA:+.? 'UNB+UNOC:3+S+R+200101:1200+1'" +
		"UNH+1+ORDERS:D:96A:UN'DTM+137:20200101:102'BGM+ZZZ+PO1+9'UNS+S'UNT+5+1'UNZ+1+1'"
	_, _ = edifact.Walk([]byte(in), nil, func(m *edifact.Message) error {
		r := v.Validate(m)
		for _, f := range r.Findings {
			fmt.Println(f.Severity, f)
		}
		fmt.Println(r.Err())
		return nil
	})
	// Output:
	// error segment 2 DTM: mandatory segment BGM is missing (code 13)
	// error segment 3 BGM: segment BGM is not expected here (out of order) (code 15)
	// warning segment 3 BGM element 1 component 1: "ZZZ" is not in code list 1001 (code 12)
	// schema: message 1 ORDERS D 96A (directory D96A): segment 2 DTM: mandatory segment BGM is missing (code 13) (and 1 more)
}
