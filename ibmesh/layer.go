package ibmesh

import (
	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// LinkType is the pcap link type of the model's InfiniBand captures:
// DLT_USER0, which tshark reads as InfiniBand with
// -o 'uat:user_dlts:"User 0 (DLT=147)","infiniband","0","","0",""'.
const LinkType = layers.LinkType(147)

// LayerTypeIB is the gopacket layer of a UD SEND Only (LRH, BTH, DETH and
// the CRCs), so Go programs can decode the model's pcap files:
//
//	p := gopacket.NewPacket(data, ibmesh.LayerTypeIB, gopacket.Default)
//	ib := p.Layer(ibmesh.LayerTypeIB).(*ibmesh.Layer)
var LayerTypeIB = gopacket.RegisterLayerType(14701, gopacket.LayerTypeMetadata{
	Name: "InfiniBand", Decoder: gopacket.DecodeFunc(decodeLayer)})

// Layer is the headers of a UD SEND Only as gopacket sees them; its
// payload is the packet's payload without padding.
type Layer struct {
	layers.BaseLayer
	Header
}

// LayerType is LayerTypeIB.
func (l *Layer) LayerType() gopacket.LayerType { return LayerTypeIB }

// CanDecode is LayerTypeIB.
func (l *Layer) CanDecode() gopacket.LayerClass { return LayerTypeIB }

// NextLayerType is the payload.
func (l *Layer) NextLayerType() gopacket.LayerType { return gopacket.LayerTypePayload }

// DecodeFromBytes parses data with Decode, the CRCs checked.
func (l *Layer) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	h, payload, err := Decode(data)
	if err != nil {
		df.SetTruncated()
		return err
	}
	l.Header = h
	l.BaseLayer = layers.BaseLayer{Contents: data[:HeaderBytes], Payload: payload}
	return nil
}

func decodeLayer(data []byte, p gopacket.PacketBuilder) error {
	l := &Layer{}
	if err := l.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(l)
	return p.NextDecoder(l.NextLayerType())
}
