// Package shiptest holds end-to-end tests of what gpuledger ships: the
// real server and agent binaries, built from this tree, driven as a user
// drives them (the install script fetched from a running server, a
// SIGTERM in the middle of a burst of chat updates).
//
// The tests build binaries and start processes, so they sit behind the
// "ship" build tag and run from .ci/run:
//
//	go test -tags ship -race -count=1 ./shiptest/
package shiptest
