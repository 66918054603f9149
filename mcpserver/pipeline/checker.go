package pipeline

import (
	"sync"
	"sync/atomic"

	"github.com/geilt/tairseach-mcp/mcpserver/routes"
)

// checkJob is a result to check; text is never written again (it is the
// text content sent to the client).
type checkJob struct {
	r    *routes.Route
	text []byte
}

// checker runs result checks on one goroutine, off the calls' path: a check
// may decode the result (jsonschema-go), which would cost a call several
// times its round trip. The goroutine starts with the first check and is
// stopped by stop; when checks come faster than it runs them, the surplus
// is skipped, as they only warn.
type checker struct {
	once     sync.Once
	stopOnce sync.Once
	jobs     chan checkJob
	quit     chan struct{}
	done     chan struct{} // closed when the goroutine has returned
	queued   atomic.Int64  // bytes of the results in jobs
}

func (c *checker) submit(j checkJob, run func(checkJob)) {
	c.once.Do(func() {
		c.jobs = make(chan checkJob, checkQueue)
		c.quit = make(chan struct{})
		c.done = make(chan struct{})
		go c.loop(run)
	})
	n := int64(len(j.text))
	if total := c.queued.Add(n); total > checkQueueBytes && total != n {
		c.queued.Add(-n) // busy: this one goes unchecked
		return
	}
	select {
	case c.jobs <- j:
	default: // busy: this one goes unchecked
		c.queued.Add(-n)
	}
}

// ran accounts for a job taken from the queue.
func (c *checker) ran(j checkJob, run func(checkJob)) {
	c.queued.Add(-int64(len(j.text)))
	run(j)
}

// loop owns nothing but the jobs it takes; on quit it runs those already
// queued, so that a stopping server still logs what it saw.
func (c *checker) loop(run func(checkJob)) {
	defer close(c.done)
	for {
		select {
		case j := <-c.jobs:
			c.ran(j, run)
		case <-c.quit:
			for {
				select {
				case j := <-c.jobs:
					c.ran(j, run)
				default:
					return
				}
			}
		}
	}
}

// stop stops the goroutine, if it started, and waits for it.
func (c *checker) stop() {
	c.once.Do(func() {}) // no goroutine may start after this
	c.stopOnce.Do(func() {
		if c.quit != nil {
			close(c.quit)
			<-c.done
		}
	})
}

// checkQueue bounds the checks waiting, and checkQueueBytes the results
// they keep from being freed: a backend answering megabytes faster than
// they are checked must not hold 64 of them in memory.
const (
	checkQueue      = 64
	checkQueueBytes = 16 << 20
)
