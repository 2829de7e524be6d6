// Package testkit holds the test doubles that the packages' tests share,
// so each is written once: a manual clock (Clock), a real ledger database
// in a test's temporary directory (DB, DBAt), and a recording chat sender.
//
// The doubles are real where that is cheap: DB is ledger/sqlite on a file,
// migrated as the server migrates it, never a mock, because the store's
// transactions, constraints and error codes are part of what the tests
// check. Only time is faked, since the logic under test reads it through
// the Now funcs the packages already take.
//
// It is imported by tests only.
package testkit
