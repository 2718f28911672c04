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

// cliKeyring loads the audit keys for a command that appends audit
// events: no key at all is a refusal with the fix (the CLI never writes
// an unsigned event), a key file others may read, or a bad key, too.
func cliKeyring(e *env, dataDir string) (*audit.Keyring, error) {
	k, err := optionalKeyring(e, dataDir)
	if err == nil && k == nil {
		_, err = audit.LoadKeyring(dataDir, e.getenv)
		return nil, refuseUnsigned(err, false)
	}
	return k, err
}

// optionalKeyring is the audit keys, or nil when there are none (verify
// says then that nothing was authenticated; an action goes through the
// hub's API).
func optionalKeyring(e *env, dataDir string) (*audit.Keyring, error) {
	k, err := audit.LoadKeyring(dataDir, e.getenv)
	if errors.Is(err, audit.ErrNoKey) {
		return nil, nil
	}
	if err != nil {
		return nil, usageErr("%s", escape.Line(err.Error()))
	}
	return k, nil
}

// workerKeyring is the sandbox worker's: it runs beside serve with its
// --data; without a key it warns that its reports' events are unsigned.
func workerKeyring(e *env, dataDir string) (*audit.Keyring, error) {
	k, err := audit.LoadKeyring(dataDir, e.getenv)
	if errors.Is(err, audit.ErrNoKey) {
		fmt.Fprintf(e.stderr, "warning: %s: the audit events of this worker are not signed and `edihub audit verify` will name them, and it reads no quarantined upload's bytes (it cannot tell the hub's copies from forged ones); pass the hub's --data or set $%s\n",
			escape.Line(err.Error()), audit.KeyEnv)
		return nil, nil
	}
	if err != nil {
		return nil, usageErr("%s", escape.Line(err.Error()))
	}
	return k, nil
}
