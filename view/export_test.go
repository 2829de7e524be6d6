package view

// LedgerErrorTexts returns the English and Chinese templates of a ledger
// error key, for the catalog test.
func LedgerErrorTexts(key string) (en, zh string) {
	t := ledgerErrors[key]
	return t[0], t[1]
}
