//go:build !(cgo && linux)

package bench

import "fmt"

// openDriver fails in builds without cgo or off Linux: the bench can only
// report every GPU figure skipped, with this reason.
func openDriver() (driver, error) {
	return nil, fmt.Errorf("%w: this binary was built without cgo (CGO_ENABLED=0) or not for Linux", errNoDriver)
}
