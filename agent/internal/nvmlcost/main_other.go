//go:build !(cgo && linux)

// Command nvmlcost needs cgo on Linux (it loads libnvidia-ml).
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "nvmlcost: needs a cgo build on Linux (it loads libnvidia-ml)")
	os.Exit(1)
}
