// SPDX-License-Identifier: GPL-2.0

package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"syscall"
)

// vec: one count a kind, in the order of the cluster semaphore's kinds.
// A semaphore of one kind has vectors of length 1.
type vec []uint64

const (
	maxKinds   = 8       // FAIRSEM_MAX_KINDS
	maxPermits = 1 << 62 // FAIRSEM_MAX_PERMITS
)

func (v vec) String() string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.FormatUint(n, 10)
	}
	return strings.Join(s, ",")
}

func (v vec) zero() bool {
	for _, n := range v {
		if n != 0 {
			return false
		}
	}
	return true
}

// le: every kind of v at most that of w.
func (v vec) le(w vec) bool {
	for i := range v {
		if v[i] > w[i] {
			return false
		}
	}
	return true
}

func (v vec) plus(w vec) vec {
	out := make(vec, len(v))
	for i := range v {
		out[i] = v[i] + w[i]
	}
	return out
}

// minus: v - w, 0 where w is larger.
func (v vec) minus(w vec) vec {
	out := make(vec, len(v))
	for i := range v {
		if v[i] > w[i] {
			out[i] = v[i] - w[i]
		}
	}
	return out
}

func (v vec) min(w vec) vec {
	out := make(vec, len(v))
	for i := range v {
		out[i] = v[i]
		if w[i] < v[i] {
			out[i] = w[i]
		}
	}
	return out
}

func (v vec) max(w vec) vec {
	out := make(vec, len(v))
	for i := range v {
		out[i] = v[i]
		if w[i] > v[i] {
			out[i] = w[i]
		}
	}
	return out
}

func (v vec) ints() []int64 {
	out := make([]int64, len(v))
	for i, n := range v {
		out[i] = int64(n)
	}
	return out
}

// parseVec reads "W" or "W0,W1,...": n counts, not all zero.
func parseVec(s string, n int) (vec, bool) {
	f := strings.Split(s, ",")
	if len(f) != n {
		return nil, false
	}
	v := make(vec, n)
	for i, x := range f {
		c, err := strconv.ParseUint(x, 10, 64)
		if err != nil || c > maxPermits {
			return nil, false
		}
		v[i] = c
	}
	return v, !v.zero()
}

// parseW: a request's weight, the first word of its value.
func parseW(val []byte, n int) vec {
	f := strings.Fields(string(val))
	if len(f) > 0 {
		if v, ok := parseVec(f[0], n); ok {
			return v
		}
	}
	// Not a request of these kinds (never written by an agent): it
	// counts as much as it can, so that it holds back what is behind it
	// rather than letting anything past.
	v := make(vec, n)
	for i := range v {
		v[i] = maxPermits
	}
	return v
}

// A limit: "L" (one kind, no label) or "LABEL=N,..." (kinds).
type limitSpec struct {
	labels []string // nil for one kind without a label
	limit  vec
}

var labelRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,15}$`)

func parseLimit(s string) (limitSpec, error) {
	s = strings.TrimSpace(s)
	errInval := errnoErr("limit "+strconv.Quote(s), syscall.EINVAL)
	if !strings.Contains(s, "=") {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil || n > maxPermits {
			return limitSpec{}, errInval
		}
		return limitSpec{limit: vec{n}}, nil
	}
	var l limitSpec
	seen := map[string]bool{}
	for _, item := range strings.Split(s, ",") {
		kv := strings.SplitN(item, "=", 2)
		if len(kv) != 2 || !labelRE.MatchString(kv[0]) || seen[kv[0]] {
			return limitSpec{}, errInval
		}
		n, err := strconv.ParseUint(kv[1], 10, 64)
		if err != nil || n > maxPermits {
			return limitSpec{}, errInval
		}
		seen[kv[0]] = true
		l.labels = append(l.labels, kv[0])
		l.limit = append(l.limit, n)
	}
	if len(l.labels) > maxKinds {
		return limitSpec{}, errInval
	}
	return l, nil
}

func (l limitSpec) nkinds() int { return len(l.limit) }

func (l limitSpec) String() string {
	if l.labels == nil {
		return strconv.FormatUint(l.limit[0], 10)
	}
	s := make([]string, len(l.labels))
	for i := range l.labels {
		s[i] = l.labels[i] + "=" + strconv.FormatUint(l.limit[i], 10)
	}
	return strings.Join(s, ",")
}

// parseShare: share mode's surplus for a semaphore of kinds spec: "S"
// for one kind without a label, "LABEL=N,..." naming every kind; nil
// when it is zero (exact mode).
func parseShare(s string, spec limitSpec) (vec, error) {
	l, err := parseLimit(s)
	if err != nil {
		return nil, err
	}
	if !l.sameKinds(spec) {
		return nil, errnoErr(fmt.Sprintf("share %s: the semaphore's kinds are those of %s", s, spec), syscall.EINVAL)
	}
	if l.limit.zero() {
		return nil, nil
	}
	return l.limit, nil
}

// labelled writes v as the limit is written: "3", or "cpu=1,gpu=0".
func (l limitSpec) labelled(v vec) string {
	if l.labels == nil {
		return v.String()
	}
	s := make([]string, len(v))
	for i := range v {
		s[i] = fmt.Sprintf("%s=%d", l.labels[i], v[i])
	}
	return strings.Join(s, ",")
}

// sameKinds: the kinds of a and b are the same, in the same order.
func (l limitSpec) sameKinds(o limitSpec) bool {
	if len(l.labels) != len(o.labels) || len(l.limit) != len(o.limit) {
		return false
	}
	for i := range l.labels {
		if l.labels[i] != o.labels[i] {
			return false
		}
	}
	return true
}

// errnoErr names an errno in a message, as the contract has it.
func errnoErr(msg string, e syscall.Errno) error {
	return &errnoError{msg: msg + ": " + e.Error() + " (" + errnoName[e] + ")", errno: e}
}

// errnoError: a message that names an errno, and the errno (errors.Is).
type errnoError struct {
	msg   string
	errno syscall.Errno
}

func (e *errnoError) Error() string        { return e.msg }
func (e *errnoError) Is(target error) bool { return target == e.errno }

var errnoName = map[syscall.Errno]string{
	syscall.EINVAL: "EINVAL", syscall.ENOENT: "ENOENT", syscall.ETIMEDOUT: "ETIMEDOUT",
}
