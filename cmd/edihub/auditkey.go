package main

import (
	"errors"
	"flag"
	"fmt"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/escape"
)

// dataFlag is --data on the commands that append audit events or verify
// them: they run beside serve and read its key, <data>/audit.key (or
// $EDIHUB_AUDIT_KEY, which wins).
type dataFlag struct{ dir string }

func (d *dataFlag) register(fs *flag.FlagSet) {
	shared(fs, func() { d.registerFlag(fs) })
}

func (d *dataFlag) registerFlag(fs *flag.FlagSet) {
	fs.StringVar(&d.dir, "data", "", "the hub's data folder, for the audit key audit.key (default: the config's data_dir, else ./data; $"+audit.KeyEnv+" wins)")
}

// resolve is --data, else the config's data folder, else ./data.
func (d *dataFlag) resolve(configDir string) string {
	return nonEmptyStr(d.dir, configDir, "data")
}

// cliKeyring loads the audit keys for a CLI command. No key at all is not
// an error (the command warns and its events are unsigned: `audit verify`
// names them); a key file others may read, or a bad key, is.
func cliKeyring(e *env, dataDir string) (*audit.Keyring, error) {
	return loadCLIKeyring(e, dataDir, true)
}

// loadCLIKeyring: warn is false for commands that only verify (their
// result says that nothing was authenticated).
func loadCLIKeyring(e *env, dataDir string, warn bool) (*audit.Keyring, error) {
	k, err := audit.LoadKeyring(dataDir, e.getenv)
	if errors.Is(err, audit.ErrNoKey) && !warn {
		return nil, nil
	}
	if errors.Is(err, audit.ErrNoKey) {
		fmt.Fprintf(e.stderr, "warning: %s: audit events of this command are not signed and `edihub audit verify` will name them; pass the hub's --data or set $%s\n",
			escape.Line(err.Error()), audit.KeyEnv)
		return nil, nil
	}
	if err != nil {
		return nil, usageErr("%s", escape.Line(err.Error()))
	}
	return k, nil
}
