//go:build !unix

package kv

import (
	"os"
	"time"
)

// canLock: bbolt locks its file with LockFileEx here, which a second handle cannot
// share, so Open never looks at a data file outside bbolt: a new file is synced before
// it is linked into place, and nothing is ever set aside.
const canLock = false

func lockFile(*os.File, time.Time) (bool, error) { return false, nil }

func samePath(*os.File, string) (bool, error) { return false, nil }
