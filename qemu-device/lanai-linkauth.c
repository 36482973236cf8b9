/*
 * LANai: sender authentication on a back-to-back link.
 *
 * Two NICs cabled to each other (no switch) each know who is at the far
 * end: the launcher says so with the peer-node property, outside the
 * guests' reach.  A frame whose header names another source (a guest that
 * owns its NIC can send any bytes) is dropped before the firmware sees it
 * and counted in rx-bad-src, a read-only QOM property: the host reads it
 * over QMP, where a guest can neither reset nor fake it (device reset
 * leaves it alone).  Through netvm-switch the switch does this check
 * (fabric/auth.c) and peer-node stays unset.  docs/security.md.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "lanai.h"
#include "trace.h"

bool lanai_linkauth_realize(LanaiState *s, Error **errp)
{
    if (s->peer_node != LANAI_PEER_ANY && s->peer_node > 0xfffe) {
        error_setg(errp, "lanai: peer-node must be below 65535");
        return false;
    }
    return true;
}

/*
 * @buf, @len: a frame as it came off the link, CRC removed.  Route bytes
 * left over (a misrouted frame, the mapper's probe) are skipped: the
 * firmware drops and counts those itself, once the source is known good.
 */
bool lanai_linkauth_ok(LanaiState *s, const uint8_t *buf, size_t len)
{
    const size_t at = offsetof(struct nvm_pkt_hdr, src_node);
    size_t rl;
    uint32_t src;

    if (s->peer_node == LANAI_PEER_ANY) {
        return true;
    }
    rl = lanai_route_len(buf, len);
    /* too short to name a source: it cannot be the peer's either */
    src = len - rl < at + 2 ? LANAI_PEER_ANY : lduw_be_p(buf + rl + at);
    if (src == s->peer_node) {
        return true;
    }
    s->rx_bad_src++;
    trace_lanai_recv_bad_src(src, s->peer_node, len);
    return false;
}

static void lanai_get_rx_bad_src(Object *obj, Visitor *v, const char *name,
                                 void *opaque, Error **errp)
{
    uint64_t n = LANAI(obj)->rx_bad_src;

    visit_type_uint64(v, name, &n, errp);
}

void lanai_linkauth_class_init(ObjectClass *klass)
{
    object_class_property_add(klass, "rx-bad-src", "uint64",
                              lanai_get_rx_bad_src, NULL, NULL, NULL);
    object_class_property_set_description(klass, "rx-bad-src",
        "frames dropped because their source was not peer-node");
}
