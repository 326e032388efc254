package report

import (
	"errors"

	"golang.org/x/sys/unix"
)

// exchange swaps the directories a and b atomically (a variable so that
// tests can take the two-rename path).
var exchange = exchangeDirs

// exchangeDirs is renameat2 with RENAME_EXCHANGE; errors.ErrUnsupported
// where the file system cannot.
func exchangeDirs(a, b string) error {
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
		return errors.ErrUnsupported
	}
	return err
}
