package directory

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/edihub/edihub/edifact"
)

// sharedDirectories is the reference data: $EDIHUB_DIRECTORIES or
// ../../../shared/edifact-directories.
func sharedDirectories(t *testing.T) string {
	t.Helper()
	d := os.Getenv("EDIHUB_DIRECTORIES")
	if d == "" {
		d = filepath.Join("..", "..", "..", "shared", "edifact-directories")
	}
	if _, err := os.Stat(filepath.Join(d, "D96A", "segments.xml")); err != nil {
		t.Skipf("no reference directories at %s (set EDIHUB_DIRECTORIES)", d)
	}
	return d
}

func TestBuiltinHasEveryDirectory(t *testing.T) {
	set := builtin(t)
	want := []string{"D01B", "D03B", "D95A", "D95B", "D96A", "D97B", "D99B", "Service_V3", "Service_V4"}
	if got := set.Names(); !reflect.DeepEqual(got, want) {
		t.Fatalf("directories %v, want %v", got, want)
	}
	for _, k := range [][3]string{{"INVOIC", "D", "96A"}, {"ORDERS", "D", "01B"}, {"CONTRL", "D", "3"}, {"CONTRL", "4", "1"}, {"AUTACK", "4", "1"}} {
		if _, _, ok := set.Lookup(k[0], k[1], k[2]); !ok {
			t.Errorf("no %v", k)
		}
	}
	if len(set.Directory("Service_V4").Codes["0085"]) == 0 {
		t.Error("service directory has no 0085 code list")
	}
}

// TestReferenceData reads the reference data once (the XML is large) and
// checks that overrides.xml and tables.bin.gz are what the generator makes
// of it now (else: go generate ./edifact/directory/), and that the
// correction matters on a real interchange.
func TestReferenceData(t *testing.T) {
	raw, err := LoadTreeUncorrected(sharedDirectories(t))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []*Directory
	for _, n := range raw.Names() {
		dirs = append(dirs, raw.Directory(n))
	}
	if !bytes.Equal(SuggestOverrides(dirs), overridesXML) {
		t.Error("overrides.xml is stale: run go generate ./edifact/directory/")
	}
	t.Run("uncorrected data shows the defect", func(t *testing.T) { overridesOnRealInterchange(t, raw) })
	shipped := builtin(t)
	for _, d := range dirs {
		if err := ApplyOverrides(d, overridesXML); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(d, shipped.Directory(d.Name)) {
			t.Errorf("directory %s differs from the shipped tables: run go generate ./edifact/directory/", d.Name)
		}
	}
}

// TestOverridesCoverKnownDefects checks the composites the reference data's
// README lists as truncated: after correction each has its standard
// components.
func TestOverridesCoverKnownDefects(t *testing.T) {
	set := builtin(t)
	want := map[string][]string{
		"C850": {"4405", "3036"}, "C508": {"3453", "3452"}, "C829": {"5495", "1082"},
		"C819": {"3229", "1131", "3055", "3228"}, "C502": {"6313", "6321", "6155", "6154"},
		"C703": {"7085", "1131", "3055"}, "C546": {"5030", "5039"}, "C827": {"7511", "1131", "3055"},
		"C329": {"2013", "2015", "2017"}, "C601": {"9015", "1131", "3055"}, "C401": {"8457", "8459", "7130"},
	}
	defects := map[string][]string{
		"D97B": {"C850", "C508", "C829"},
		"D99B": {"C819", "C502", "C703", "C546", "C827", "C329", "C601", "C401"},
		"D01B": {"C819", "C829"}, "D03B": {"C819", "C829"},
	}
	for dir, ids := range defects {
		for _, id := range ids {
			found := false
			for _, s := range set.Directory(dir).Segments {
				for _, el := range s.Elements {
					if el.ID != id {
						continue
					}
					found = true
					var got []string
					for _, c := range el.Components {
						got = append(got, c.ID)
					}
					if !reflect.DeepEqual(got, want[id]) {
						t.Errorf("%s %s in %s: components %v, want %v", dir, id, s.Tag, got, want[id])
					}
				}
			}
			if !found {
				t.Errorf("%s %s: used by no segment", dir, id)
			}
		}
	}
}

// overridesOnRealInterchange: staedi's INVOIC D97B has CUX+1:USD; the
// reference data's D97B C504 lacks 6345 (currency), so without the
// correction USD lands on 6343 and fails its code list.
func overridesOnRealInterchange(t *testing.T, raw *Set) {
	data, err := os.ReadFile(filepath.Join(corpusDir(), "staedi__invoic_d97b.edi"))
	if err != nil {
		t.Skipf("corpus: %v", err)
	}
	doc, err := edifact.Parse(data, &edifact.Options{Lenient: true}) // Latin-1 under UNOA
	if err != nil {
		t.Fatal(err)
	}
	msg := doc.Messages()[0]
	v, _ := NewValidator(builtin(t), &Options{Strictness: Strict})
	if r := v.Validate(msg); r.Err() != nil {
		t.Fatalf("corrected D97B refuses a valid INVOIC: %v", r.Err())
	}
	v, _ = NewValidator(raw, &Options{Strictness: Strict})
	r := v.Validate(msg)
	if r.Err() == nil || r.Findings[0].Tag != "CUX" {
		t.Fatalf("uncorrected D97B: want the CUX defect to show, got %+v", r.Findings)
	}
}

func TestLoadFolderAddsDirectory(t *testing.T) {
	src := sharedDirectories(t)
	set := NewSet() // empty: only what the folder brings
	got, err := set.LoadFolder(filepath.Join(src, "D96A"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := got.Lookup("ORDERS", "D", "96A"); !ok || len(set.Names()) != 0 {
		t.Fatalf("LoadFolder: %v, original changed: %v", got.Names(), set.Names())
	}
	if _, err := set.LoadFolder(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no directory") {
		t.Fatalf("empty folder: %v", err)
	}
	bad := t.TempDir()
	os.MkdirAll(filepath.Join(bad, "D11A", "messages"), 0o755)
	os.WriteFile(filepath.Join(bad, "D11A", "segments.xml"), []byte("<segments><segment"), 0o644)
	if _, err := set.LoadFolder(bad); err == nil {
		t.Fatal("broken XML accepted")
	}
}

func TestDecodeTablesRefusesGarbage(t *testing.T) {
	var buf bytes.Buffer
	if err := EncodeTables(&buf, []*Directory{testDir()}); err != nil {
		t.Fatal(err)
	}
	back, err := DecodeTables(bytes.NewReader(buf.Bytes()))
	if err != nil || !reflect.DeepEqual(back[0], testDir()) {
		t.Fatalf("round trip: %v\n%+v", err, back)
	}
	if _, err := DecodeTables(strings.NewReader("not gzip")); err == nil {
		t.Fatal("garbage accepted")
	}
}

// TestContrlValidates builds CONTRL messages of syntax 3 and 4 (positive
// and negative, every segment of the structure) and validates them against
// the service directories.
func TestContrlValidates(t *testing.T) {
	v, _ := NewValidator(builtin(t), &Options{Strictness: Strict})
	for _, in := range []string{
		"UNA:+.? 'UNB+UNOA:3+R+S+200101:1200+9'UNH+1+CONTRL:D:3:UN'UCI+1+S+R+7'UNT+3+1'UNZ+1+9'",
		"UNA:+.? 'UNB+UNOA:3+R+S+200101:1200+9'UNH+1+CONTRL:D:3:UN'UCI+1+S+R+4'UCM+1+INVOIC:D:96A:UN+4'UCS+5+13'UCD+12+2:1'UNT+6+1'UNZ+1+9'",
		"UNA:+.?*'UNB+UNOC:4+R+S+20200101:1200+9'UNH+1+CONTRL:4:1:UN'UCI+1+S+R+8'UNT+3+1'UNZ+1+9'",
		"UNA:+.?*'UNB+UNOC:4+R+S+20200101:1200+9'UNH+1+CONTRL:4:1:UN'UCI+1+S+R+4'UCM+1+INVOIC:D:96A:UN+4+15'UCS+5+15'UCD+39+2:1'UNT+6+1'UNZ+1+9'",
	} {
		m := parseOne(t, in)
		r := v.Validate(m)
		if !r.Validated || r.Err() != nil {
			t.Errorf("%s\n  %v %+v", in, r.Err(), r.Findings)
		}
	}
	bad := parseOne(t, "UNA:+.? 'UNB+UNOA:3+R+S+200101:1200+9'UNH+1+CONTRL:D:3:UN'UCM+1+INVOIC:D:96A:UN+4'UNT+3+1'UNZ+1+9'")
	if r := v.Validate(bad); r.Err() == nil || r.Findings[0].Code != CodeMissing || r.Findings[0].Missing != "UCI" {
		t.Errorf("CONTRL without UCI: %+v", r.Findings)
	}
}

// TestEveryMessageReachable: each message of the shipped UN directories is
// found by its own directory's identifier (a few files of the reference
// data lack 0052/0054 or use the interactive 0312/0316).
func TestEveryMessageReachable(t *testing.T) {
	set := builtin(t)
	n := 0
	for _, name := range set.Names() {
		if !isUNDirectory(name) {
			continue
		}
		for typ := range set.Directory(name).Messages {
			if d, _, ok := set.Lookup(typ, "D", name[1:]); !ok || d.Name != name {
				t.Errorf("%s %s not reachable as D %s", name, typ, name[1:])
			}
			n++
		}
	}
	if n < 1000 {
		t.Fatalf("only %d messages", n)
	}
}
