package rtl_test

import (
	"fmt"

	"github.com/hwcoll/hwcoll/rtl"
)

// producer sends a token every third cycle over a delay line, and shows on
// a registered output how many it has sent. Its state is a register; its
// Eval is the clocked logic: it reads Q (this cycle's value) and Sets the
// next.
type producer struct {
	rtl.Module
	Tx    rtl.LineOut[uint32] // tokens, arriving `latency` cycles later
	Count rtl.Out[uint32]     // registered: the consumer sees it a cycle late
	n     rtl.Reg[uint32]
}

func (p *producer) Eval() {
	n := p.n.Q()
	if n == 3 {
		p.Sleep() // done: nothing wakes it again
		return
	}
	if p.Now()%3 == 0 {
		p.Tx.Send(n)
		p.n.Set(n + 1)
		p.Count.Set(n + 1)
	}
}

// consumer prints each token the cycle it arrives, with the producer's
// count as the consumer sees it then, and sleeps until the next arrival
// wakes it.
type consumer struct {
	rtl.Module
	Rx    rtl.LineIn[uint32]
	Count rtl.In[uint32]
}

func (c *consumer) Eval() {
	for {
		v, ok := c.Rx.Recv()
		if !ok {
			break
		}
		fmt.Printf("cycle %d: token %d arrives; producer's count reads %d\n", c.Now(), v, c.Count.Get())
	}
	c.Sleep()
}

// A two-block netlist: declare the blocks under the top module, connect
// their ports, elaborate (Build checks that every input is driven once and
// no output dangles), then run. The registered count lags the producer by
// one cycle; the delay line delivers a token 2 cycles after it is sent.
func Example() {
	sim := rtl.NewSim(rtl.Options{Seed: 1})
	p := &producer{}
	p.Init(sim.Top(), "prod", p)
	p.Tx.Init(&p.Module, "tx")
	p.Count.Init(&p.Module, "count")
	p.n.Init(&p.Module, "n")
	c := &consumer{}
	c.Init(sim.Top(), "cons", c)
	c.Rx.Init(&c.Module, "rx")
	c.Count.Init(&c.Module, "count")

	rtl.ConnectLine(&p.Tx, &c.Rx, 2)
	rtl.Connect(&p.Count, &c.Count)
	if err := sim.Build(); err != nil {
		fmt.Println(err)
		return
	}
	sim.Run(12)
	fmt.Println("the consumer is", c.Path())
	// Output:
	// cycle 2: token 0 arrives; producer's count reads 1
	// cycle 5: token 1 arrives; producer's count reads 2
	// cycle 8: token 2 arrives; producer's count reads 3
	// the consumer is top.cons
}
