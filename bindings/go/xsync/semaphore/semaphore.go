// SPDX-License-Identifier: LGPL-2.1-or-later

// Package semaphore stands in for golang.org/x/sync/semaphore when x/sync's
// own tests run against fairsem (bindings/go/xsync/gen.sh): the tests'
// import of golang.org/x/sync/semaphore is pointed here, and nothing else
// in them changes.  Weighted is fairsem.Semaphore itself, so the only code
// is the constructor.
package semaphore

import (
	"os"

	"fairsem"
)

// Weighted is fairsem's Semaphore, whose methods are Weighted's.
type Weighted = fairsem.Semaphore

// NewWeighted is x/sync's constructor, made with fairsem.New: a FIFO
// semaphore of n permits in the kernel; with FAIRSEM_XSYNC_FAST=1 in the
// environment, fairsem.NewFast, whose uncontended calls take the fast
// path, and which must be mapped.  x/sync's cannot fail, so a failure here
// (no module loaded) panics.
func NewWeighted(n int64) *Weighted {
	fast := os.Getenv("FAIRSEM_XSYNC_FAST") == "1"
	s, err := fairsem.New(n)
	if fast {
		s, err = fairsem.NewFast(n, fairsem.FIFO)
	}
	if err != nil {
		panic("fairsem: NewWeighted: " + err.Error())
	}
	if fast && !s.IsFast() {
		panic("fairsem: NewWeighted: a fast semaphore that is not mapped")
	}
	return s
}
