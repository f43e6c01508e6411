// SPDX-License-Identifier: GPL-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// An etcd that does not answer is ETIMEDOUT, however the client says so.
func TestEtcdTimeoutIsETIMEDOUT(t *testing.T) {
	for _, err := range []error{
		context.DeadlineExceeded,
		fmt.Errorf("get: %w", context.DeadlineExceeded),
		status.Error(codes.DeadlineExceeded, "latest balancer error"),
		status.Error(codes.Unknown, "context deadline exceeded"),
	} {
		if got := etcdErr("status", err).Error(); !strings.HasSuffix(got, "(ETIMEDOUT)") {
			t.Errorf("%v: %q, want ETIMEDOUT", err, got)
		}
	}
	if got := etcdErr("status", errors.New("permission denied")).Error(); strings.Contains(got, "ETIMEDOUT") {
		t.Errorf("another error named ETIMEDOUT: %q", got)
	}
}
