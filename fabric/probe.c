// SPDX-License-Identifier: GPL-2.0-only
/*
 * netvm-switch: answers the mapper's switch probes (include/netvm/mapper.h).
 *
 * A probe is a frame whose next route byte is NVM_MAP_SWITCH_BYTE.  What
 * follows that byte is the return route, then a raw packet carrying a
 * struct nvm_map_msg of kind SWITCH_PROBE.  The answer is a new raw packet
 * behind that return route, sent out of the port the probe came in on, so
 * the mapper learns which of our ports leads back to it.  Myrinet's
 * XBar32 switches answered such probes the same way.
 */
#include <string.h>

#include "switch.h"
#include "netvm/crc32.h"		/* the same CRC as the NIC's */
#include "netvm/mapper.h"

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static uint16_t get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* A stable 64-bit id from the switch's name (FNV-1a): the same switch
 * keeps its id across restarts, and names are unique in a topology. */
uint64_t fab_switch_id(const Switch *sw)
{
	uint64_t h = 0xcbf29ce484222325ull;
	const char *s;

	for (s = sw->name; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
	return h;
}

/*
 * @d, @len: the probe after its NVM_MAP_SWITCH_BYTE.  Returns the reply
 * frame, or NULL when the probe is malformed (counted by the caller).
 */
Frame *fab_probe_reply(const Switch *sw, int in_port, const uint8_t *d,
		       uint32_t len)
{
	struct nvm_map_msg m;
	struct nvm_pkt_hdr h;
	uint32_t rl = 0, body, crc;
	const uint8_t *ph;
	uint8_t *o;
	Frame *f;
	int i;

	while (rl < len && (d[rl] & NVM_ROUTE_BYTE))
		rl++;
	if (rl > NVM_ROUTE_MAX ||
	    len < rl + sizeof(h) + sizeof(m) + NVM_PKT_CRC_LEN)
		return NULL;
	ph = d + rl;
	if (ph[0] != NVM_PKT_RAW || ph[1] != NVM_PKT_VERSION ||
	    get_be16(ph + 6) < sizeof(m))
		return NULL;
	memcpy(&m, ph + sizeof(h), sizeof(m));
	if (memcmp(m.magic, NVM_MAP_MAGIC, NVM_MAP_MAGIC_LEN) ||
	    m.kind != NVM_MAP_SWITCH_PROBE)
		return NULL;

	/* cookie stays as the mapper wrote it (big-endian either way) */
	m.kind = NVM_MAP_SWITCH_REPLY;
	put_be16((uint8_t *)&m.nports, (uint16_t)sw->nports);
	put_be16((uint8_t *)&m.in_port, (uint16_t)in_port);
	for (i = 0; i < 8; i++)
		((uint8_t *)&m.id)[i] = fab_switch_id(sw) >> (56 - 8 * i);
	memset(m.name, 0, sizeof(m.name));
	strncpy(m.name, sw->name, sizeof(m.name) - 1);

	body = sizeof(h) + sizeof(m);
	f = g_malloc0(sizeof(*f) + rl + body + NVM_PKT_CRC_LEN);
	f->len = rl + body + NVM_PKT_CRC_LEN;
	o = f->data;
	memcpy(o, d, rl);
	o += rl;
	o[0] = NVM_PKT_RAW;
	o[1] = NVM_PKT_VERSION;
	put_be16(o + 2, NVM_MAP_SWITCH_NODE);
	memcpy(o + 4, ph + 2, 2);	/* to the probe's sender */
	put_be16(o + 6, sizeof(m));
	memcpy(o + sizeof(h), &m, sizeof(m));
	crc = nvm_crc32(0, o, body);
	for (i = 0; i < 4; i++)
		o[body + i] = crc >> (24 - 8 * i);
	return f;
}
