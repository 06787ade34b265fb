package program

// mailbox holds a host's messages completed and not yet received. A Recv
// takes the earliest message from its peer with its tag, so while few
// messages wait a list in completion order is searched from the front.
// In an all-to-all a host can hold thousands (every node's message
// arrives before its Recv is reached), and a search and removal in the
// list cost O(N) each, O(N²) a node; past indexAt messages the mailbox
// keeps one FIFO per (peer, tag) instead, O(1) a message. The index is
// made only by a host that needs it, and dropped when it empties.
type mailbox struct {
	list  []mail
	index map[uint64]*mailFIFO // (src, tag) → its messages in completion order
	n     int                  // messages in index
}

// mailFIFO is the messages of one (src, tag), at[head:] waiting.
type mailFIFO struct {
	at   []uint64
	head int
}

const indexAt = 64

func mailKey(src, tag int32) uint64 { return uint64(uint32(src))<<32 | uint64(uint32(tag)) }

// put adds a message completed at cycle at.
func (b *mailbox) put(src, tag int32, at uint64) {
	if b.index == nil {
		if len(b.list) < indexAt {
			b.list = append(b.list, mail{src: src, tag: tag, at: at})
			return
		}
		b.index = make(map[uint64]*mailFIFO, 2*indexAt)
		for _, m := range b.list { // completion order kept within each (src, tag)
			b.add(m.src, m.tag, m.at)
		}
		b.list = b.list[:0]
	}
	b.add(src, tag, at)
}

func (b *mailbox) add(src, tag int32, at uint64) {
	k := mailKey(src, tag)
	f := b.index[k]
	if f == nil {
		f = &mailFIFO{}
		b.index[k] = f
	}
	f.at = append(f.at, at)
	b.n++
}

// take removes the earliest message from src with tag and returns the
// cycle it completed; ok is false when there is none.
func (b *mailbox) take(src, tag int32) (at uint64, ok bool) {
	if b.index == nil {
		for i, m := range b.list {
			if m.src == src && m.tag == tag {
				b.list = append(b.list[:i], b.list[i+1:]...)
				return m.at, true
			}
		}
		return 0, false
	}
	k := mailKey(src, tag)
	f := b.index[k]
	if f == nil {
		return 0, false
	}
	at = f.at[f.head]
	if f.head++; f.head == len(f.at) {
		delete(b.index, k)
	}
	if b.n--; b.n == 0 {
		b.index = nil // back to the list: most hosts hold few messages
	}
	return at, true
}

// len is the number of messages waiting.
func (b *mailbox) len() int { return len(b.list) + b.n }
