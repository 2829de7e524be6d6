//go:build linux

package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gpuledger/gpuledger/perf"
)

// diskAlign is the alignment O_DIRECT wants of buffers, offsets and
// lengths: the largest logical block size in use (4 KiB).
const diskAlign = 4096

// Stale test files: a bench killed mid-test (SIGKILL after the grace,
// a power cut) cannot remove its file, so the next one removes what
// such a bench left.
const (
	// diskFilePrefix is the test file's name before its 16 hex digits.
	diskFilePrefix = ".gpuledger-bench-"
	// diskStaleAge is how old a test file must be to be taken for one
	// left behind: a running bench writes its file for seconds.
	diskStaleAge = time.Minute
	// diskStaleScan bounds the directory entries read looking for them.
	diskStaleScan = 1 << 16
)

// diskTest writes up to diskSize bytes into a new file in dir, fsyncs
// it, then reads it back, each within half of the time to deadline, and
// returns the write and read speeds in MB/s (1e6). It bypasses the page
// cache with O_DIRECT; where the filesystem refuses it (tmpfs, some
// overlay and network filesystems) it falls back to buffered writes
// with fsync and reads after dropping the cache, and says so in a Skip;
// it flushes every chunk, so that the write phase ends at its deadline
// (one fsync of all the page cache took would not: 256 MiB on a cloud
// disk of 8 MB/s is longer than the whole bench). The file is created
// 0600 and removed when the test ends, or when ctx ends (the daemon
// stops the bench with SIGTERM first); one a killed bench left is
// removed by the next (removeStale). A read-only, full or missing
// directory is a Skip, never a failure.
func diskTest(ctx context.Context, dir string, deadline time.Time, o diskOptions) (writeMBps, readMBps float64, skips []perf.Skip) {
	skipBoth := func(format string, args ...any) (float64, float64, []perf.Skip) {
		why := fmt.Sprintf(format, args...)
		return 0, 0, append(skips, hostSkip("disk_write_mbps", "%s", why), hostSkip("disk_read_mbps", "%s", why))
	}
	size, chunk := o.size, o.chunk
	if size <= 0 {
		size = diskSize
	}
	if chunk <= 0 {
		chunk = diskChunk
	}
	free := o.free
	if free == nil {
		free = freeBytes
	}
	// Before the free space is read: a file left behind takes space.
	removeStale(dir, time.Now())
	avail, err := free(dir)
	if err != nil {
		return skipBoth("cannot test the disk of %s: %v", dir, err)
	}
	// A quarter of the free space at most: the test must never fill the
	// user's disk; under diskMin the figure would be the cache's.
	least := max(min(diskMin, size), int64(chunk))
	size = min(size, int64(avail/4)) / int64(chunk) * int64(chunk)
	if size < least {
		return skipBoth("%s has only %d MiB free: too little to test its disk", dir, avail>>20)
	}
	left := time.Until(deadline)
	if left < hostMinTime || ctx.Err() != nil {
		return skipBoth("no time left for the disk test within the bench's timeout")
	}

	open := o.open
	if open == nil {
		open = os.OpenFile
	}
	flush := o.flush
	if flush == nil {
		flush = func(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }
	}
	name := filepath.Join(dir, diskFilePrefix+randHex())
	const flags = os.O_RDWR | os.O_CREATE | os.O_EXCL
	direct := true
	f, err := open(name, flags|syscall.O_DIRECT, 0o600)
	if errors.Is(err, syscall.EINVAL) {
		// The filesystem refuses O_DIRECT; some kernels create the file
		// before refusing.
		os.Remove(name)
		direct = false
		f, err = open(name, flags, 0o600)
	}
	if err != nil {
		switch {
		case errors.Is(err, syscall.EROFS), errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
			return skipBoth("cannot write in %s (read-only or not ours): %v", dir, unwrapPath(err))
		case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
			return skipBoth("%s is full", dir)
		}
		return skipBoth("cannot create a test file in %s: %v", dir, unwrapPath(err))
	}
	defer os.Remove(name)
	defer f.Close()
	if !direct {
		skips = append(skips, hostSkip("disk_direct",
			"the filesystem of %s refused O_DIRECT: the disk figures are fsync'd writes and reads after dropping the page cache (on tmpfs, memory speed)", dir))
	}

	buf := alignedBuf(chunk)
	fill(buf)
	writeBy := time.Now().Add(left / 2)
	var written int64
	t0 := time.Now()
	for written < size && time.Now().Before(writeBy) && ctx.Err() == nil {
		n, err := f.Write(buf)
		written += int64(n)
		if err == nil && !direct {
			// Through the page cache: this chunk on the disk before the
			// next, so that the time is the disk's and bounded.
			err = flush(f)
		}
		if err != nil {
			if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
				return skipBoth("%s is full", dir)
			}
			return skipBoth("writing in %s: %v", dir, unwrapPath(err))
		}
	}
	if !direct {
		if err := flush(f); err != nil {
			return skipBoth("flushing %s: %v", dir, unwrapPath(err))
		}
	}
	if err := f.Sync(); err != nil {
		return skipBoth("flushing %s: %v", dir, unwrapPath(err))
	}
	wel := time.Since(t0)
	if written == 0 || wel <= 0 {
		return skipBoth("no time left for the disk test within the bench's timeout")
	}
	writeMBps = float64(written) / wel.Seconds() / 1e6

	if !direct {
		// Best effort: a filesystem that keeps its pages in memory
		// (tmpfs) ignores it, which the Skip above says.
		unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
	}
	var read int64
	t1 := time.Now()
	for read < written && time.Now().Before(deadline) && ctx.Err() == nil {
		n, err := f.ReadAt(buf, read)
		read += int64(n)
		if err != nil || n == 0 {
			break
		}
	}
	rel := time.Since(t1)
	if read == 0 || rel <= 0 {
		return writeMBps, 0, append(skips, hostSkip("disk_read_mbps", "no time left to read back within the bench's timeout"))
	}
	return writeMBps, float64(read) / rel.Seconds() / 1e6, skips
}

// removeStale removes the test files a killed bench left in dir: names
// of diskFilePrefix and 16 hex digits, regular files (not a link) of
// this user, last written diskStaleAge before now or earlier. Anything
// else, another user's file or a running bench's, is left alone; an
// error only means nothing more is removed.
func removeStale(dir string, now time.Time) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	defer d.Close()
	uid := uint32(os.Getuid())
	for seen := 0; seen < diskStaleScan; {
		ents, err := d.ReadDir(256)
		for _, e := range ents {
			if !isDiskFileName(e.Name()) || !e.Type().IsRegular() {
				continue
			}
			fi, err := e.Info() // lstat: a link is not followed
			if err != nil || !fi.Mode().IsRegular() || now.Sub(fi.ModTime()) < diskStaleAge {
				continue
			}
			if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Uid != uid {
				continue
			}
			os.Remove(filepath.Join(dir, e.Name()))
		}
		seen += len(ents)
		if err != nil {
			return
		}
	}
}

// isDiskFileName reports whether name is a test file's: diskFilePrefix
// and 16 lowercase hex digits (randHex).
func isDiskFileName(name string) bool {
	h, ok := strings.CutPrefix(name, diskFilePrefix)
	return ok && len(h) == 16 && strings.Trim(h, "0123456789abcdef") == ""
}

// freeBytes is the space available to us on dir's filesystem.
func freeBytes(dir string) (uint64, error) {
	var s syscall.Statfs_t
	if err := syscall.Statfs(dir, &s); err != nil {
		return 0, unwrapPath(err)
	}
	return s.Bavail * uint64(s.Bsize), nil
}

// alignedBuf returns n bytes starting at a diskAlign boundary.
func alignedBuf(n int) []byte {
	b := make([]byte, n+diskAlign)
	off := 0
	if r := int(uintptr(unsafe.Pointer(&b[0])) % diskAlign); r != 0 {
		off = diskAlign - r
	}
	return b[off : off+n : off+n]
}

// fill writes pseudo-random bytes into b, so that no layer can compress
// or deduplicate what the test writes.
func fill(b []byte) {
	var seed [32]byte
	rand.Read(seed[:])
	mrand.NewChaCha8(seed).Read(b)
}

func randHex() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// unwrapPath drops the *PathError's path (the caller names the
// directory) and keeps the cause.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
