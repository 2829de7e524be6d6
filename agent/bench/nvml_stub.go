//go:build !(cgo && linux)

package bench

import "errors"

// openFacts fails in builds without cgo or off Linux: go-nvml needs cgo.
func openFacts() (factReader, error) {
	return nil, errors.New("bench: this binary was built without cgo: no NVML")
}
