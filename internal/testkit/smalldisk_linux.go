package testkit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// SmallDisk mounts a tmpfs of size bytes on a new directory under
// t.TempDir() and returns the directory; it is unmounted when the test
// ends. A real small file system is the honest way to fill a disk: the
// kernel's own ENOSPC reaches SQLite as it would on a full data volume.
// Mounting needs root (CI's .ci/run runs as root): as anyone else the
// test is skipped, with the reason.
func SmallDisk(t testing.TB, size int64) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounts a small tmpfs to fill a real file system, which needs root: run the tests as root (as .ci/run does) to include it")
	}
	dir := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, fmt.Sprintf("size=%d,mode=0700", size)); err != nil {
		t.Skipf("cannot mount a tmpfs on %s (%v): this test needs root with CAP_SYS_ADMIN, as .ci/run has", dir, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// FillDisk writes a file named name in dir until the file system holding
// dir is full, and returns its path. Truncating it frees space again.
func FillDisk(t testing.TB, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for len(buf) > 0 {
		if _, err := f.Write(buf); err != nil {
			if !errorsIsNoSpace(err) {
				t.Fatalf("fill %s: %v", path, err)
			}
			buf = buf[:len(buf)/2] // top up to the last block
		}
	}
	return path
}

// FreeDisk frees n bytes of a file FillDisk wrote.
func FreeDisk(t testing.TB, path string, n int64) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, max(fi.Size()-n, 0)); err != nil {
		t.Fatal(err)
	}
}

// DiskFree returns the bytes free on the file system holding dir.
func DiskFree(t testing.TB, dir string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * int64(st.Bsize)
}

func errorsIsNoSpace(err error) bool { return errors.Is(err, syscall.ENOSPC) }
