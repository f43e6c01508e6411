// SPDX-License-Identifier: GPL-2.0

// Uncontended Acquire(ctx, 1) + Release(1) through the Go binding.
// Prints "RESULT go NS ITERS".
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"fairsem"
)

func main() {
	sem, err := fairsem.New(1)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx := context.Background()
	sem.Acquire(ctx, 1) // warm the handle pool
	sem.Release(1)
	start := time.Now()
	n := 0
	for time.Since(start) < time.Second {
		for i := 0; i < 1000; i++ {
			if err := sem.Acquire(ctx, 1); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			sem.Release(1)
			n++
		}
	}
	fmt.Printf("RESULT go %.0f %d\n", float64(time.Since(start).Nanoseconds())/float64(n), n)
}
