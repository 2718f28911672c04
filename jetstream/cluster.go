package jetstream

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
)

// ClusterOptions make the embedded server one node of a NATS cluster: a
// site that wants three edihub nodes and nothing else gives each the same
// name and the full route list (its own address included: the server
// ignores a route to itself).
type ClusterOptions struct {
	// Name is the cluster's name; every node gives the same one.
	Name string `yaml:"name"`
	// Listen is HOST:PORT where this node accepts routes from the others.
	Listen string `yaml:"listen"`
	// Routes are nats-route://host:port URLs of every node.
	Routes []string `yaml:"routes"`
}

// Enabled reports whether a cluster is configured.
func (c ClusterOptions) Enabled() bool { return c.Name != "" || c.Listen != "" || len(c.Routes) > 0 }

// Validate reports a cluster setting that cannot work.
func (c ClusterOptions) Validate() error {
	if !c.Enabled() {
		return nil
	}
	var errs []error
	if c.Name == "" {
		errs = append(errs, errors.New("nats.cluster.name is empty: every node of a cluster gives the same name"))
	} else if strings.ContainsAny(c.Name, " .*>\t") {
		errs = append(errs, fmt.Errorf("nats.cluster.name %q may not contain spaces, dots, * or >", c.Name))
	}
	if _, _, err := splitHostPort(c.Listen); err != nil {
		errs = append(errs, fmt.Errorf("nats.cluster.listen: %w", err))
	}
	if len(c.Routes) < 2 {
		errs = append(errs, fmt.Errorf("nats.cluster.routes: %d given; list every node of the cluster (three for R3), this one included", len(c.Routes)))
	}
	for _, r := range c.Routes {
		u, err := url.Parse(r)
		if err != nil || u.Host == "" || (u.Scheme != "nats-route" && u.Scheme != "nats") {
			errs = append(errs, fmt.Errorf("nats.cluster.routes: %q is not nats-route://host:port", r))
		}
	}
	return errors.Join(errs...)
}

// apply sets the cluster part of the server's options.
func (c ClusterOptions) apply(o *server.Options) error {
	host, port, err := splitHostPort(c.Listen)
	if err != nil {
		return err
	}
	o.Cluster.Name = c.Name
	o.Cluster.Host = host
	o.Cluster.Port = port
	o.Routes = server.RoutesFromStr(strings.Join(c.Routes, ","))
	return nil
}

// CheckReplicas refuses a replica count the server behind nc cannot give:
// more than one replica needs a JetStream cluster. It is a plain-language
// error at start instead of a stream that cannot elect a leader.
func CheckReplicas(nc *nats.Conn, replicas int) error {
	if replicas < 1 || replicas > 5 {
		return fmt.Errorf("nats.replicas %d: must be 1 to 5 (3 on a three-node cluster)", replicas)
	}
	if replicas == 1 {
		return nil
	}
	if nc.ConnectedClusterName() == "" {
		return fmt.Errorf("nats.replicas is %d but the NATS server at %s is a single server, not part of a cluster: "+
			"set nats.replicas to 1, or point --nats-url at every node of a cluster (nats://a:4222,nats://b:4222,nats://c:4222)",
			replicas, RedactURL(nc.ConnectedUrlRedacted()))
	}
	return nil
}

// WaitStream ensures the stream want (EnsureStream), retrying until it
// works or ctx ends: a cluster that has just elected its meta leader
// answers account info before it can place a replicated stream on its
// peers.
func WaitStream(ctx context.Context, j js.JetStream, want js.StreamConfig) error {
	if _, err := EnsureStream(ctx, j, want); err != nil {
		return fmt.Errorf("stream %s (%d replicas) cannot be placed: %w", want.Name, want.Replicas, err)
	}
	return nil
}

// WaitReady waits until JetStream answers (a cluster that is still
// electing its meta leader answers "temporarily unavailable"), up to ctx.
func WaitReady(ctx context.Context, j js.JetStream) error {
	var last error
	for {
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := j.AccountInfo(actx)
		cancel()
		if err == nil {
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("JetStream not available: %w", last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}
