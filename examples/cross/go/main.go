// SPDX-License-Identifier: GPL-2.0

// The Go side of examples/cross: "hold" takes a permit on its own handle
// of the inherited semaphore (fd 3; or opens NAME, a third argument) and
// waits to be killed; "wait ID"
// queues, prints "got ID" once granted, releases and exits.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"fairsem"
)

func main() {
	var sem *fairsem.Semaphore
	var err error
	if len(os.Args) > 3 {
		sem, err = fairsem.OpenNamed(os.Args[3])
	} else if sem, err = fairsem.FromFile(os.NewFile(3, "sem")); err == nil {
		sem, err = sem.NewHandle()
	}
	if err == nil {
		err = sem.Acquire(context.Background(), 1)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cross (go):", err)
		os.Exit(1)
	}
	if os.Args[1] == "hold" {
		fmt.Println("held")
		// Sleeping, not select{}: with nothing else to wait for, the
		// runtime would call an empty select a deadlock and exit.
		for {
			time.Sleep(time.Hour)
		}
	}
	fmt.Println("got", os.Args[2])
	sem.Release(1)
}
