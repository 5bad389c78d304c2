//go:build unix

package interrupt

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"
)

func TestNotify(t *testing.T) {
	for _, tt := range []struct {
		sig    syscall.Signal
		status int
		text   string
	}{
		{syscall.SIGINT, 130, "interrupt (SIGINT)"},
		{syscall.SIGTERM, 143, "terminated (SIGTERM)"},
	} {
		t.Run(tt.text, func(t *testing.T) {
			ctx, stop := Notify(context.Background())
			defer stop()
			if err := syscall.Kill(syscall.Getpid(), tt.sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("the context was not cancelled")
			}
			err := fmt.Errorf("x.pcap: interrupted at offset 24: %w", context.Cause(ctx))
			if got := err.Error(); got != "x.pcap: interrupted at offset 24: "+tt.text {
				t.Errorf("error %q", got)
			}
			if st, ok := ExitStatus(err); !ok || st != tt.status {
				t.Errorf("ExitStatus = %d, %v; want %d", st, ok, tt.status)
			}
		})
	}
}

func TestStop(t *testing.T) {
	ctx, stop := Notify(context.Background())
	stop()
	stop() // twice is fine
	if !errors.Is(context.Cause(ctx), context.Canceled) {
		t.Errorf("cause %v after stop, want context.Canceled", context.Cause(ctx))
	}
	if _, ok := ExitStatus(context.Cause(ctx)); ok {
		t.Error("stop looks like a signal")
	}
	if _, ok := ExitStatus(errors.New("disk full")); ok {
		t.Error("an error looks like a signal")
	}
}
