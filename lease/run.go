package lease

import (
	"context"
	"errors"
	"time"
)

// Run blocks until ctx is done. Whenever this process holds the lease name
// it runs job with a context that ends when the lease is lost, and a
// fence (Held.Fence) for actions with an effect outside. The lease is
// renewed every TTL/3; a renewal that fails for another reason than a
// take-over (the server away) is retried until the lease would have
// expired on the server, then the job is stopped. Contenders try every
// TTL/3, so a singleton whose process died moves within about 1⅓ TTL.
func (m *Manager) Run(ctx context.Context, name string, job func(ctx context.Context, fence func(context.Context) error)) error {
	every := m.opts.TTL / 3
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		actx, cancel := context.WithTimeout(ctx, every)
		held, err := m.TryAcquire(actx, name)
		cancel()
		if err != nil && ctx.Err() == nil {
			m.log.Warn().Err(err).Str("lease", name).Msg("cannot reach the lease bucket; trying again")
		}
		if held != nil {
			m.log.Info().Str("lease", name).Uint64("token", held.Token()).Str("holder", m.opts.Holder).Msg("lease taken: this instance runs the singleton")
			m.hold(ctx, held, job)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// hold runs job while held lasts.
func (m *Manager) hold(ctx context.Context, held *Held, job func(context.Context, func(context.Context) error)) {
	jctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		job(jctx, held.Fence)
	}()
	every := m.opts.TTL / 3
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			stop()
			<-done
			rctx, cancel := context.WithTimeout(context.Background(), time.Second)
			held.Release(rctx)
			cancel()
			return
		case <-done:
			stop()
			return // the job ended by itself (an error it logged); contend again
		case <-t.C:
		}
		rctx, cancel := context.WithTimeout(ctx, every)
		err := held.Renew(rctx)
		cancel()
		if err == nil {
			continue
		}
		// Lost, or unreachable for so long that the server may have let it
		// expire: either way another process may hold it now.
		if errors.Is(err, ErrLost) || held.sinceRenewal() >= m.opts.TTL-every {
			m.log.Warn().Err(err).Str("lease", held.name).Msg("lease lost: the singleton stops here")
			stop()
			<-done
			return
		}
		m.log.Warn().Err(err).Str("lease", held.name).Msg("lease renewal failed; retrying")
	}
}
