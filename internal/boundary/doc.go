// Package boundary holds no code, only a test that keeps the module's
// dependency boundaries from drifting: what the ledger may import, what the
// agent binary may link and that the server needs no cgo. The rules are the
// ones docs/design.md states; the test asks the real go command (go list
// -deps, go build) so that it sees exactly what a build would link.
package boundary
