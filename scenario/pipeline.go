package scenario

import (
	"fmt"

	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/stats"
	"github.com/hwcoll/hwcoll/tb"
)

// token is what the reference delay line carries: the sequence number and
// the cycle it was issued.
type token struct {
	Seq  uint32
	Sent uint64
}

// tokenSource issues tokens at random (Bernoulli, rate p) on registered
// valid/data outputs and, as a reference, on a delay line.
type tokenSource struct {
	rtl.Module
	Valid rtl.Out[bool]
	Data  rtl.Out[uint32]
	Ref   rtl.LineOut[token]
	seq   rtl.Reg[uint32]
	total uint32
	rate  float64
}

func (s *tokenSource) Eval() {
	seq := s.seq.Q()
	issue := seq < s.total && s.Rand().Float64() < s.rate
	s.Valid.Set(issue)
	if issue {
		s.Data.Set(seq)
		s.Ref.Send(token{Seq: seq, Sent: s.Now()})
		s.seq.Set(seq + 1)
	}
	if seq >= s.total && !issue {
		s.Sleep() // the last valid has been lowered
	}
}

// stage is one pipeline register: its outputs are its inputs one cycle late.
// It sleeps until an input changes, so an idle pipeline costs nothing.
type stage struct {
	rtl.Module
	InValid  rtl.In[bool]
	InData   rtl.In[uint32]
	OutValid rtl.Out[bool]
	OutData  rtl.Out[uint32]
}

func (s *stage) Eval() {
	s.OutValid.Set(s.InValid.Get())
	s.OutData.Set(s.InData.Get())
	s.Sleep()
}

// tokenSink checks that the register pipeline and the delay line deliver
// every token in the same cycle: an N-stage pipeline after a registered
// source is a delay line of latency N+1.
type tokenSink struct {
	rtl.Module
	Valid    rtl.In[bool]
	Data     rtl.In[uint32]
	Ref      rtl.LineIn[token]
	got      uint32
	latency  uint64
	lat      stats.Latency
	err      error
	mismatch rtl.Probe[bool]
}

func (k *tokenSink) Eval() {
	now := k.Now()
	ref, refOK := k.Ref.Recv()
	v := k.Valid.Get()
	switch {
	case v && !refOK:
		k.fail(fmt.Errorf("cycle %d: pipeline delivered token %d, delay line nothing", now, k.Data.Get()))
	case !v && refOK:
		k.fail(fmt.Errorf("cycle %d: delay line delivered token %d, pipeline nothing", now, ref.Seq))
	case v && refOK:
		if d := k.Data.Get(); d != ref.Seq || d != k.got {
			k.fail(fmt.Errorf("cycle %d: pipeline token %d, delay line token %d, expected %d", now, d, ref.Seq, k.got))
		}
		if now-ref.Sent != k.latency {
			k.fail(fmt.Errorf("cycle %d: token %d took %d cycles, expected %d", now, ref.Seq, now-ref.Sent, k.latency))
		}
		k.lat.Add(now - ref.Sent)
		k.got++
	}
	k.mismatch.Set(k.err != nil)
	if !v {
		k.Sleep() // a valid input or a line arrival wakes us
	}
}

func (k *tokenSink) fail(err error) {
	if k.err == nil {
		k.err = err
	}
}

type pipeline struct {
	rtl.Module
	src    *tokenSource
	stages []*stage
	sink   *tokenSink
}

func newPipeline(parent *rtl.Module, name string, n int, total uint32, rate float64) *pipeline {
	p := &pipeline{}
	p.Init(parent, name, p)
	src := &tokenSource{total: total, rate: rate}
	src.Init(&p.Module, "source", src)
	src.Valid.Init(&src.Module, "valid")
	src.Data.Init(&src.Module, "data", rtl.Width(16))
	src.Ref.Init(&src.Module, "ref")
	src.seq.Init(&src.Module, "seq")
	p.src = src
	valid, data := &src.Valid, &src.Data
	for i := 0; i < n; i++ {
		st := &stage{}
		st.Init(&p.Module, rtl.Idx("stage", i), st)
		st.InValid.Init(&st.Module, "in_valid")
		st.InData.Init(&st.Module, "in_data", rtl.Width(16))
		st.OutValid.Init(&st.Module, "valid")
		st.OutData.Init(&st.Module, "data", rtl.Width(16))
		rtl.Connect(valid, &st.InValid)
		rtl.Connect(data, &st.InData)
		valid, data = &st.OutValid, &st.OutData
		p.stages = append(p.stages, st)
	}
	k := &tokenSink{latency: uint64(n) + 1}
	k.Init(&p.Module, "sink", k)
	k.Valid.Init(&k.Module, "valid")
	k.Data.Init(&k.Module, "data", rtl.Width(16))
	k.Ref.Init(&k.Module, "ref")
	k.mismatch.Init(&k.Module, "mismatch")
	rtl.Connect(valid, &k.Valid)
	rtl.Connect(data, &k.Data)
	rtl.ConnectLine(&src.Ref, &k.Ref, uint64(n)+1)
	p.sink = k
	return p
}

func (p *pipeline) harness(sim *rtl.Sim) *tb.Harness {
	return &tb.Harness{
		Sim:      sim,
		Done:     func() bool { return p.sink.got == p.src.total || p.sink.err != nil },
		Monitors: []tb.Monitor{{Name: "pipeline equals delay line", Check: func() error { return p.sink.err }}},
		Check: func() error {
			if p.sink.err != nil {
				return p.sink.err
			}
			return nil
		},
		Status: func() string { return fmt.Sprintf("%d of %d tokens out", p.sink.got, p.src.total) },
		Report: func(r *tb.Report) {
			r.PacketsInjected = uint64(p.src.seq.Q())
			r.PacketsDelivered = uint64(p.sink.got)
			r.SetLatency(p.sink.lat.Summary(sim.PeriodPS()))
		},
	}
}

func init() {
	register(Scenario{
		Name:          "pipeline",
		Desc:          "8-stage register pipeline beside a latency-9 delay line; every token must leave both in the same cycle",
		DefaultCycles: 10_000,
		Build: func(p Params) (*tb.Harness, error) {
			sim := rtl.NewSim(rtl.Options{Seed: p.Seed, PeriodPS: p.PeriodPS})
			pl := newPipeline(sim.Top(), "pipe", 8, 200, 0.4)
			return pl.harness(sim), nil
		},
	})
}
