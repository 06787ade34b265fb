package msglayer_test

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/msglayer"
	"github.com/hwcoll/hwcoll/vcd"
)

// A traced endpoint shows its processor's job, its reception queue and
// its messages in reassembly: a rendezvous message from node 0 shows
// postsend, the lead packet, the ack's dispatch and the rest at the
// sender, and dispatch, the ack and recvdone at the receiver.
func TestTraceShowsTheProcessor(t *testing.T) {
	p := msglayer.DefaultParams()
	m := newMachineEval(t, []int{2, 2}, &p, 1, true) // eager injection, as a traced run has
	var buf bytes.Buffer
	w, err := m.sim.NewTraceWriter(&buf)
	require.NoError(t, err)
	require.NoError(t, m.sim.Trace(w, "top.ml(0).*,top.ml(3).*"))
	m.script(t, []op{
		{at: 0, node: 3, recv: true, req: msglayer.SendReq{Dst: 0}},
		{at: 0, node: 0, req: msglayer.SendReq{Dst: 3, Bytes: 1000, Proto: msglayer.Rendezvous}},
	})
	m.drain(t, 1, 1_000_000)
	m.sim.Run(10)
	require.NoError(t, m.sim.EndTrace())
	f, err := vcd.Parse(&buf)
	require.NoError(t, err)
	jobs := func(path string) []msglayer.Job {
		var out []msglayer.Job
		for _, c := range f.History(path) {
			v, err := strconv.ParseUint(c.Value, 2, 8)
			require.NoError(t, err)
			if j := msglayer.Job(v); j != msglayer.JobIdle && (len(out) == 0 || out[len(out)-1] != j) {
				out = append(out, j)
			}
		}
		return out
	}
	require.Equal(t, []msglayer.Job{msglayer.JobPost, msglayer.JobPacket, msglayer.JobDispatch, msglayer.JobPacket}, jobs("top.ml(0).job"))
	require.Equal(t, []msglayer.Job{msglayer.JobDispatch, msglayer.JobAck, msglayer.JobDispatch, msglayer.JobRecvDone}, jobs("top.ml(3).job"))
	require.NotEmpty(t, f.History("top.ml(3).rxq"))
	require.NotEmpty(t, f.History("top.ml(3).open"))
}
