// SPDX-License-Identifier: GPL-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.etcd.io/etcd/etcdserver/api/v3rpc/rpctypes"
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

// A member that went away, or a cluster without a leader, is worth another
// try at the agent's start; a refusal is not.
func TestEtcdUnavailableIsTriedAgain(t *testing.T) {
	for _, err := range []error{
		status.Error(codes.Unavailable, "transport is closing"),
		fmt.Errorf("limit: %w", status.Error(codes.Unavailable, "transport is closing")),
		rpctypes.Error(rpctypes.ErrGRPCNoLeader),
		fmt.Errorf("limit: %w", rpctypes.ErrLeaderChanged),
	} {
		if !unavailable(err) {
			t.Errorf("%v: not tried again", err)
		}
	}
	for _, err := range []error{
		nil,
		errors.New("permission denied"),
		status.Error(codes.InvalidArgument, "bad key"),
		rpctypes.ErrLeaseNotFound,
	} {
		if unavailable(err) {
			t.Errorf("%v: tried again", err)
		}
	}
}
