// SPDX-License-Identifier: GPL-2.0

// Uncontended Acquire(ctx, 1) + Release(1) through the Go binding, the
// same on a fast semaphore (the page, no system call), and of the vector
// {1, 4096} on a semaphore of two kinds.  Prints "RESULT go NS ITERS",
// "RESULT go-fast NS ITERS" and "RESULT go-kinds NS ITERS"; with names
// as arguments (go, go-fast, go-kinds), only those.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"fairsem"
)

// want: is the bench name asked for (all of them when none is)?
func want(name string) bool {
	for _, a := range os.Args[1:] {
		if a == name {
			return true
		}
	}
	return len(os.Args) < 2
}

func main() {
	if want("go") {
		sem, err := fairsem.New(1)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		loop("go", sem)
	}
	if want("go-fast") {
		fastLoop()
	}
	if want("go-kinds") {
		kinds()
	}
}

// fastLoop: loop on a fast semaphore, which must be mapped.
func fastLoop() {
	fast, err := fairsem.NewFast(1, fairsem.FIFO)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if !fast.IsFast() {
		fmt.Fprintln(os.Stderr, "NewFast(1, FIFO): not mapped")
		os.Exit(1)
	}
	loop("go-fast", fast)
}

// loop: Acquire(ctx, 1) + Release(1) on sem for a second, as RESULT name.
func loop(name string, sem *fairsem.Semaphore) {
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
	fmt.Printf("RESULT %s %.0f %d\n", name, float64(time.Since(start).Nanoseconds())/float64(n), n)
}

// kinds: Acquire(ctx, {1, 4096}) + Release on a semaphore of two kinds.
func kinds() {
	k, err := fairsem.NewKinds(fairsem.Kind{Label: "requests", Limit: 1}, fairsem.Kind{Label: "bytes", Limit: 65536})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx, v := context.Background(), []int64{1, 4096}
	start := time.Now()
	n := 0
	for time.Since(start) < time.Second {
		for i := 0; i < 1000; i++ {
			if err := k.Acquire(ctx, v); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			k.Release(v)
			n++
		}
	}
	fmt.Printf("RESULT go-kinds %.0f %d\n", float64(time.Since(start).Nanoseconds())/float64(n), n)
}
