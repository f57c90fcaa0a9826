package chess

// Sliding attacks by "fancy" magic bitboards: the occupancy of the squares
// a slider's attack depends on (its rays without their edge squares),
// multiplied by a per-square magic number, gives in its top bits an index
// into that square's table of attack sets. The magic numbers below were found
// once by a random search (xorshift from a fixed seed, as the Chess
// Programming Wiki's "Magic Bitboards" page describes) and are checked at
// init: every occupancy of every square must index its own attack set, or
// init panics. The tables take about 840 KB.

var (
	rookMagics = [64]uint64{
		0x9080001184204004, 0x00c01008a0004000, 0x0500081100c12000, 0x4700090084203000,
		0x9200060068210410, 0x0080020014000980, 0x00801a0001005080, 0x0900018021450002,
		0x3000800220400480, 0x2000400042201000, 0x2201001020010940, 0x8000801000800800,
		0x09010008020c1100, 0x0602001012000884, 0x0441002402000100, 0x0140800244802100,
		0x9220608000c00090, 0x0090054000c82000, 0x0001010010406001, 0x4801848018003000,
		0x0404050010080100, 0x0001010006040008, 0x0900040048900621, 0x000102000a81004c,
		0x1c0440008004208c, 0x1020100340042040, 0x8d02002200348040, 0x0000080080100080,
		0x1084240080080280, 0x14890c0080020080, 0x0081284400223001, 0x0100884600108114,
		0x0002400020800880, 0x2080600280804003, 0x0020806000801004, 0x800a002112004008,
		0x02c2800400800803, 0x0040800400800200, 0x08408a2804000110, 0x040280c582000104,
		0x0080044460044004, 0x0020400285030025, 0x8009001020010040, 0x0001004810010020,
		0x0201002800110004, 0x2002008084008002, 0x0813000600110004, 0x0801000040810002,
		0xa001014024800500, 0x02c0a08240090100, 0x0040200810008080, 0x00a8000880100480,
		0x200908020c008080, 0x020200504804c200, 0x01010042000c1100, 0x000580010000d080,
		0x0400209201048042, 0x4a01015080400721, 0x0702091020010045, 0x0888100100082045,
		0x0013001004080023, 0xc022000425081002, 0xc201000200008401, 0xc0000510e4440082,
	}
	bishopMagics = [64]uint64{
		0x0088a00c04420420, 0x0002840902021000, 0x0008008102002000, 0x0114124200105200,
		0x00051040400910c0, 0x0042051008231410, 0x00184c0444c01000, 0x0000420050080400,
		0x0000102018430442, 0x1080200444104440, 0x0003280805002000, 0x000108060b480010,
		0x0608011040800024, 0x00020d1016500040, 0x100904040c040601, 0x0c04410900900400,
		0x4108000c08081842, 0x4402001010021088, 0x101000080081a228, 0x0008094882044040,
		0x0084000081a00050, 0x0001002210008401, 0x0001002044022000, 0x0600271100821000,
		0x4108200040840104, 0x1004a00042080b00, 0x80910100100408a2, 0x220500c00c004200,
		0x08410040a4054000, 0x0848060110c10088, 0x10a4008704088c00, 0x0423120001098980,
		0x0041041002202000, 0x0284100c11488104, 0x2012034040240100, 0xa020120080080080,
		0x8802008400020160, 0x0a05014200010500, 0x0202020050040444, 0x4304108028328410,
		0x0204090c40101001, 0x0182008420004404, 0x0000082088013000, 0x7000204200806800,
		0x2033400811400202, 0x0001100102000110, 0x0345412602002400, 0x0031240400810048,
		0x014300d004200480, 0x0202048601108000, 0x0018305200901080, 0x0880058105882002,
		0x0008045082020000, 0x1004303010012000, 0x204002821c01000a, 0x0804108400408144,
		0x0800804400844090, 0x4200420202052d00, 0x20020022010c2928, 0x0280020040420613,
		0x0000100014104404, 0x0000004150260088, 0x0000090801080a00, 0x0028020400440100,
	}
)

// magic is one square's entry: the relevant-occupancy mask, the multiplier,
// the shift (64 - bits of the mask) and the square's slice of the table.
type magic struct {
	mask  Bitboard
	mul   uint64
	shift uint8
	table []Bitboard
}

var rookMagic, bishopMagic [64]magic

func (m *magic) attacks(occ Bitboard) Bitboard {
	return m.table[(uint64(occ&m.mask)*m.mul)>>m.shift]
}

func rookAttacks(s Square, occ Bitboard) Bitboard { return rookMagic[s].attacks(occ) }

func bishopAttacks(s Square, occ Bitboard) Bitboard { return bishopMagic[s].attacks(occ) }

// initMagics builds the tables; tables.go's init calls it once the rays exist.
func initMagics() {
	fill := func(ms *[64]magic, muls *[64]uint64, dirs [4]int) {
		for s := Square(0); s < 64; s++ {
			var mask Bitboard
			for _, d := range dirs {
				r := rays[d][s]
				if r == 0 {
					continue
				}
				if d < dirS { // drop the edge square: it is attacked whether occupied or not
					r &^= bb(r.last())
				} else {
					r &^= bb(r.first())
				}
				mask |= r
			}
			m := &ms[s]
			m.mask, m.mul, m.shift = mask, muls[s], uint8(64-mask.count())
			m.table = make([]Bitboard, 1<<mask.count())
			filled := make([]bool, len(m.table))
			for sub := Bitboard(0); ; {
				var att Bitboard
				for _, d := range dirs {
					att |= slide(d, s, sub)
				}
				i := (uint64(sub) * m.mul) >> m.shift
				if filled[i] && m.table[i] != att {
					panic("chess: a magic number maps two attack sets to one index")
				}
				m.table[i], filled[i] = att, true
				if sub = (sub - mask) & mask; sub == 0 {
					break
				}
			}
		}
	}
	fill(&rookMagic, &rookMagics, [4]int{dirN, dirE, dirS, dirW})
	fill(&bishopMagic, &bishopMagics, [4]int{dirNE, dirNW, dirSE, dirSW})
}
