//go:build !linux

package report

import "errors"

// exchange is unsupported here: Commit renames twice.
var exchange = func(a, b string) error { return errors.ErrUnsupported }
