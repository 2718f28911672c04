package directory

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Set is the directories a Validator knows, indexed by the message
// identifier of UNH S009 (type, version, release). It is read-only once
// built and safe to share between goroutines.
type Set struct {
	dirs  map[string]*Directory
	byMsg map[msgKey]entry
}

type msgKey struct{ typ, version, release string }

type entry struct {
	dir *Directory
	msg *MessageDef
}

// NewSet returns a Set of the given directories; a later one replaces an
// earlier one of the same name.
func NewSet(dirs ...*Directory) *Set {
	s := &Set{dirs: map[string]*Directory{}, byMsg: map[msgKey]entry{}}
	for _, d := range dirs {
		s.add(d)
	}
	return s
}

func (s *Set) add(d *Directory) {
	if old, ok := s.dirs[d.Name]; ok {
		for _, m := range old.Messages {
			delete(s.byMsg, msgKey{m.Type, m.Version, m.Release})
		}
	}
	s.dirs[d.Name] = d
	for _, m := range d.Messages {
		s.byMsg[msgKey{m.Type, m.Version, m.Release}] = entry{d, m}
	}
}

// With returns a new Set holding s's directories and dirs (dirs win on a
// name clash). s is not changed.
func (s *Set) With(dirs ...*Directory) *Set {
	all := make([]*Directory, 0, len(s.dirs)+len(dirs))
	for _, n := range s.Names() {
		all = append(all, s.dirs[n])
	}
	return NewSet(append(all, dirs...)...)
}

// Names lists the directories of s, sorted.
func (s *Set) Names() []string {
	names := make([]string, 0, len(s.dirs))
	for n := range s.dirs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Directory returns the directory of that name, or nil.
func (s *Set) Directory(name string) *Directory { return s.dirs[name] }

// Lookup returns the directory and structure of a message type by its UNH
// S009 identifier: type 0065, version 0052, release 0054 (INVOIC D 96A,
// CONTRL D 3, CONTRL 4 1). ok is false when no directory of s has it.
func (s *Set) Lookup(typ, version, release string) (d *Directory, m *MessageDef, ok bool) {
	e, ok := s.byMsg[msgKey{typ, version, release}]
	return e.dir, e.msg, ok
}

// serviceDir is the directory that defines UNH, UNT, UNS and the other
// service segments for a syntax version (UNB S001/0002).
func (s *Set) serviceDir(syntaxVersion string) *Directory {
	if syntaxVersion == "4" {
		if d := s.dirs["Service_V4"]; d != nil {
			return d
		}
	}
	if d := s.dirs["Service_V3"]; d != nil {
		return d
	}
	return s.dirs["Service_V4"]
}

// LoadTree reads every sub-folder of root that is a directory in the XML
// layout (it has a segments.xml), named after the sub-folder (D96A,
// Service_V4). When root itself is such a folder it is read alone, named
// after its base name.
func LoadTree(root string) (*Set, error) {
	return loadTree(root, true)
}

// LoadTreeUncorrected is LoadTree without the corrections of overrides.xml.
func LoadTreeUncorrected(root string) (*Set, error) {
	return loadTree(root, false)
}

func loadTree(root string, correct bool) (*Set, error) {
	dirs, err := loadFolders(root, correct)
	if err != nil {
		return nil, err
	}
	s := NewSet(dirs...)
	s.lendServiceCodes()
	return s, nil
}

// LoadFolder returns a new Set holding s's directories and the ones read
// from path (as LoadTree reads them), which win on a name clash: the way to
// add directories at run time (--directory-dir).
func (s *Set) LoadFolder(path string) (*Set, error) {
	dirs, err := loadFolders(path, true)
	if err != nil {
		return nil, err
	}
	out := s.With(dirs...)
	out.lendServiceCodes()
	return out, nil
}

func loadFolders(root string, correct bool) ([]*Directory, error) {
	load := LoadDir
	if !correct {
		load = LoadDirUncorrected
	}
	if isDirectoryFolder(root) {
		d, err := load(root, filepath.Base(filepath.Clean(root)))
		if err != nil {
			return nil, err
		}
		return []*Directory{d}, nil
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("reading directories: %w", err)
	}
	var dirs []*Directory
	for _, e := range ents {
		p := filepath.Join(root, e.Name())
		if !e.IsDir() || !isDirectoryFolder(p) {
			continue
		}
		d, err := load(p, e.Name())
		if err != nil {
			return nil, err
		}
		dirs = append(dirs, d)
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("no directory (a folder with segments.xml and messages/) in %s", root)
	}
	return dirs, nil
}

// lendServiceCodes gives the service directories (Service_V3, Service_V4),
// whose folders hold no code lists, the service code lists (data elements
// 0001..0999) of the newest UN directory of s.
func (s *Set) lendServiceCodes() {
	var newest *Directory
	for _, d := range s.dirs {
		if isUNDirectory(d.Name) && (newest == nil || dirYear(d.Name) > dirYear(newest.Name)) {
			newest = d
		}
	}
	if newest == nil {
		return
	}
	for _, d := range s.dirs {
		if !strings.HasPrefix(d.Name, "Service_") || len(d.Codes) > 0 {
			continue
		}
		for id, list := range newest.Codes {
			if strings.HasPrefix(id, "0") {
				d.Codes[id] = list
			}
		}
	}
}

// isUNDirectory tells D96A-style names.
func isUNDirectory(name string) bool {
	return len(name) == 4 && name[0] == 'D' && name[1] >= '0' && name[1] <= '9' && name[2] >= '0' && name[2] <= '9'
}

// dirYear orders directory names: D95A < D99B < D01B.
func dirYear(name string) string {
	if name[1] < '5' {
		return "20" + name[1:]
	}
	return "19" + name[1:]
}
