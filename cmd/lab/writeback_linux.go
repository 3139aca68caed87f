//go:build linux && (amd64 || arm64)

package main

import (
	"os"
	"syscall"
)

// startWriteback starts the writeback of n bytes of f from off:
// sync_file_range(2) with SYNC_FILE_RANGE_WRITE, which waits for no I/O.
func startWriteback(f *os.File, off, n int64) error {
	const syncFileRangeWrite = 2
	c, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var errno syscall.Errno
	if err := c.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall6(syscall.SYS_SYNC_FILE_RANGE, fd, uintptr(off), uintptr(n), syncFileRangeWrite, 0, 0)
	}); err != nil {
		return err
	}
	if errno != 0 {
		return errno
	}
	return nil
}
