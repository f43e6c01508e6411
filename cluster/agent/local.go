// SPDX-License-Identifier: GPL-2.0

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"unsafe"

	"fairsem"
)

// The local semaphore, always through the binding's Kinds (a semaphore of
// one kind is a Kinds of one), so that one code path serves both.
type local struct {
	sem *fairsem.Semaphore // keeps the handle open
	k   *fairsem.Kinds
	id  uint64
	n   int
}

// struct fairsem_link, FAIRSEM_IOC_LINK = _IOW(0xFA, 7, 32 bytes)
type sysLink struct {
	fd       int32
	mode     uint32
	name     uint64
	reserved [2]uint64
}

const iocLink = 0x4020fa07

// linkName names semaphore k path, as CreateNamed does for one of one kind.
func linkName(k *fairsem.Kinds, path string) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	dfd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer syscall.Close(dfd)
	cname, err := syscall.BytePtrFromString(base)
	if err != nil {
		return err
	}
	arg := sysLink{fd: int32(k.File().Fd()), mode: 0o666, name: uint64(uintptr(unsafe.Pointer(cname)))}
	_, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(dfd), iocLink, uintptr(unsafe.Pointer(&arg)))
	runtime.KeepAlive(cname)
	runtime.KeepAlive(k)
	if e != 0 {
		return &os.PathError{Op: "fairsem link", Path: path, Err: e}
	}
	return nil
}

// openLocal opens the named semaphore path, or makes it with the kinds of
// spec at a limit of 0.  EINVAL when it exists with other kinds.
func openLocal(path string, spec limitSpec) (*local, error) {
	for round := 0; round < 16; round++ {
		s, err := fairsem.OpenNamed(path)
		if err == nil {
			return wrapLocal(s, spec)
		}
		if !errors.Is(err, syscall.ENOENT) {
			return nil, err
		}
		kinds := make([]fairsem.Kind, spec.nkinds())
		for i := range kinds {
			if spec.labels != nil {
				kinds[i].Label = spec.labels[i]
			}
		}
		k, err := fairsem.NewKinds(kinds...)
		if err != nil {
			return nil, err
		}
		err = linkName(k, path)
		k.CloseHandle()
		if err != nil && !errors.Is(err, syscall.EEXIST) {
			return nil, err
		}
	}
	return nil, fmt.Errorf("%s: keeps coming and going", path)
}

func wrapLocal(s *fairsem.Semaphore, spec limitSpec) (*local, error) {
	k, err := fairsem.KindsFromFile(s.File())
	if err != nil {
		return nil, err
	}
	labels := k.Labels()
	ok := len(labels) == spec.nkinds()
	for i := 0; ok && spec.labels != nil && i < len(labels); i++ {
		ok = labels[i] == spec.labels[i]
	}
	if !ok {
		return nil, errnoErr(fmt.Sprintf("local semaphore's kinds %q, not those of the cluster (%s)",
			labels, spec), syscall.EINVAL)
	}
	i, err := k.Info()
	if err != nil {
		return nil, err
	}
	return &local{sem: s, k: k, id: i.ID, n: len(labels)}, nil
}

// localSem: what the agent does to the local semaphore (a fake kernel in
// the tests).
type localSem interface {
	info() (localInfo, error)
	add(v vec) error    // FAIRSEM_IOC_RESIZE, FAIRSEM_RESIZE_ADD
	remove(v vec) error // FAIRSEM_IOC_RESIZE, FAIRSEM_RESIZE_REMOVE: may fall below taken
}

type localInfo struct {
	limit, taken, available vec
	waiters                 uint64
}

func (l *local) info() (localInfo, error) {
	i, err := l.k.Info()
	if err != nil {
		return localInfo{}, err
	}
	li := localInfo{limit: make(vec, l.n), taken: make(vec, l.n), available: make(vec, l.n), waiters: i.Waiters}
	for n := 0; n < l.n && n < len(i.Kinds); n++ {
		li.limit[n] = i.Kinds[n].Limit
		li.taken[n] = i.Kinds[n].Taken
		li.available[n] = i.Kinds[n].Available
	}
	return li, nil
}

func (l *local) add(v vec) error    { return l.k.Add(v.ints()) }
func (l *local) remove(v vec) error { return l.k.Remove(v.ints()) }
