//go:build !linux

package agent

import "errors"

func statDisk(path string) (Disk, error) {
	return Disk{Path: path}, errors.New("agent: disk space is read on linux only")
}
