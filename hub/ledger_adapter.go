package hub

import "errors"

// LedgerFuncs adapts any interchange store to Ledger without hub importing
// it (imports point cmd → hub → leaf packages). cmd/edihub builds one from
// a *ledger.Store:
//
//	hub.LedgerFuncs{
//		SeenFunc:   func(k hub.LedgerKey) (bool, error) { return st.Seen(ledger.Key(k)) },
//		RecordFunc: func(k hub.LedgerKey) error { return st.Record(ledger.Key(k)) },
//	}
type LedgerFuncs struct {
	SeenFunc   func(LedgerKey) (bool, error)
	RecordFunc func(LedgerKey) error
}

var errLedgerIncomplete = errors.New("ledger: SeenFunc and RecordFunc are both required")

// Seen calls SeenFunc.
func (l LedgerFuncs) Seen(k LedgerKey) (bool, error) {
	if l.SeenFunc == nil {
		return false, errLedgerIncomplete
	}
	return l.SeenFunc(k)
}

// Record calls RecordFunc.
func (l LedgerFuncs) Record(k LedgerKey) error {
	if l.RecordFunc == nil {
		return errLedgerIncomplete
	}
	return l.RecordFunc(k)
}
