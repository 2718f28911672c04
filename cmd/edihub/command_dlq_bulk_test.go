package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/edifact/edifacttest"
	"github.com/edihub/edihub/hub/ops"
)

// A partner's bad batch: twelve files without an interchange header,
// each quoting other bytes, are one group (the fingerprints its
// sub-groups) whose IDs are all listed on request; the group's filter
// parks and drops them with a replay's guards.
func TestDLQGroupsAndBulkFilter(t *testing.T) {
	d := startDLQHub(t)
	d.failValidate.Store(true)
	for i := 0; i < 12; i++ {
		d.publish(t, "ACME", fmt.Sprintf("junk file %d from the portal", i))
	}
	d.publish(t, "ACME", edifacttest.Invoice("OK1"))
	d.waitDLQ(t, 13)

	out, _, code := d.cmd(t, "dlq", "inspect", "--group")
	if code != 0 || !strings.HasPrefix(out, "parse/schema/code 13  12 messages, dlq, partners ACME") ||
		!strings.Contains(out, "  filter  stage=parse,cause=schema,code=13\n") || !strings.Contains(out, "… and 2 more (--ids lists all)") ||
		!strings.Contains(out, "validate/business/") {
		t.Fatalf("inspect --group: %d\n%s", code, out)
	}
	out, _, _ = d.cmd(t, "dlq", "inspect", "--group", "--ids", "--cause", "schema")
	if ids := strings.Fields(strings.TrimPrefix(out[strings.Index(out, "  IDs     "):], "  IDs     ")); len(ids) != 12 || ids[11] != "DLQ:12" && ids[11] != "DLQ:13" {
		t.Fatalf("inspect --group --ids lists %d IDs:\n%s", len(ids), out)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"park", "--filter", "code=13"}, "--reason is required"},
		{[]string{"drop", "--filter", "code=13"}, "--reason is required"},
		{[]string{"park", "DLQ:1", "--filter", "code=13", "--reason", "x"}, "not both"},
		{[]string{"park", "--filter", "code=thirteen", "--reason", "x"}, "want an error code"},
		{[]string{"drop", "--filter", "code=13", "--max", "0", "--reason", "x"}, "no unlimited"},
	} {
		if _, errOut, code := d.cmd(t, append([]string{"dlq"}, c.args...)...); code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("dlq %v: %d %s, want exit 2 and %q", c.args, code, errOut, c.want)
		}
	}

	out, _, code = d.cmd(t, "dlq", "park", "--filter", "stage=parse,cause=schema,code=13", "--max", "5", "--dry-run", "--reason", "junk batch")
	if code != 0 || strings.Count(out, "would be parked\n") != 5 || !strings.Contains(out, "matched 12, would be parked (dry-run: nothing was changed) 5, failed 0; 7 more match") {
		t.Fatalf("park --dry-run: %d\n%s", code, out)
	}
	if n := d.count(t, "PARKING"); n != 0 {
		t.Fatalf("a dry run parked %d", n)
	}
	out, _, code = d.cmd(t, "dlq", "park", "--filter", "stage=parse,cause=schema,code=13", "--max", "5", "--reason", "junk batch")
	if code != 0 || strings.Count(out, "parked → PARKING:") != 5 || !strings.Contains(out, "7 more match") || d.count(t, "PARKING") != 5 {
		t.Fatalf("park --filter: %d\n%s", code, out)
	}
	out, _, code = d.cmd(t, "dlq", "drop", "--filter", "kind=parking,code=13", "--reason", "partner resends", "--json")
	var rep ops.BulkReport
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.Action != "drop" || rep.Matched != 5 || rep.Done != 5 || rep.Filter != "kind=parking,code=13" {
		t.Fatalf("drop --filter --json: %d\n%s", code, out)
	}
	if n := d.count(t, "PARKING"); n != 0 {
		t.Fatalf("PARKING holds %d after the drop", n)
	}
	recs, err := audit.Read(context.Background(), d.js, "AUDIT", time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	byAction := map[string]int{}
	for _, r := range recs {
		if r.Event.Details["filter"] != "" {
			byAction[r.Event.Action+" "+r.Event.Details["filter"]]++
		}
	}
	if byAction["park kind=dlq,stage=parse,cause=schema,code=13"] != 5 || byAction["drop kind=parking,code=13"] != 5 {
		t.Fatalf("audit events with their filter: %v", byAction)
	}
}
