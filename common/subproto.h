/* subproto.h - the wire protocol of the in-container sub-agent API
 * (docs/subagents.md), shared by the monitor's server (monitor/subagents.c)
 * and the static client (monitor/client/agentrt-client.c).  Header only: the
 * client is built without the runtime library.
 *
 * A UNIX stream socket; each message is a frame
 *
 *   u32 length (little-endian, of what follows) | u8 type | payload
 *
 * with length >= 1 and at most SUBPROTO_MAX.  The client sends one 'Q'
 * frame, its payload the command's words each ended by a NUL ("run\0--name\0
 * a\0--\0make\0test\0"), and with it (SCM_RIGHTS, on the same sendmsg) the
 * fds that become the child's stdin, stdout and stderr (0 to 3 of them; the
 * server uses /dev/null for the missing ones).  While the request runs it may
 * send 'S' frames (payload: a signal number in decimal) that the server
 * sends on to the child.  The server answers with 'O' (text for the client's
 * stdout) and 'E' (a line for its stderr) frames, and ends with one 'X'
 * frame (payload: the exit status in decimal, 0-255) before it closes.
 */
#ifndef AGENTRT_SUBPROTO_H
#define AGENTRT_SUBPROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SUBPROTO_SOCK "/run/agentrt/agent.sock"
#define SUBPROTO_CLIENT "/run/agentrt/bin/agentrt"
#define SUBPROTO_MAX 65536u
#define SUBPROTO_MAX_WORDS 256u
/* The group a sub-agent's slirp4netns runs as in its parent's network
 * namespace (cli/sandbox.c, sandbox-net --netns): the parent's egress table
 * sends that group's connections to ports 443 and 80 to its proxy's
 * TLS_PROXY_CHILD_PORT (monitor/tls_proxy.h), where the parent's secrets are
 * never put in: a child uses only the secrets it was given, through its own
 * proxy (escape: a sub-agent not given the secret ...). */
#define SUBPROTO_NET_GID 0x61677273u /* "agrs" */

enum {
  SUBPROTO_REQUEST = 'Q',
  SUBPROTO_SIGNAL = 'S',
  SUBPROTO_STDOUT = 'O',
  SUBPROTO_STDERR = 'E',
  SUBPROTO_EXIT = 'X',
};

static inline void subproto_put_len(unsigned char *h, uint32_t n)
{
  h[0] = (unsigned char)(n & 0xff);
  h[1] = (unsigned char)((n >> 8) & 0xff);
  h[2] = (unsigned char)((n >> 16) & 0xff);
  h[3] = (unsigned char)((n >> 24) & 0xff);
}

static inline uint32_t subproto_get_len(const unsigned char *h)
{
  return (uint32_t)h[0] | (uint32_t)h[1] << 8 | (uint32_t)h[2] << 16 | (uint32_t)h[3] << 24;
}

/* Not in the client (it has no runtime library; common/subproto.c): */
/* body[0..n) as NUL-ended words (at most SUBPROTO_MAX_WORDS, the last one
 * ended by body[n-1]); *ret a NULL-terminated copy.  -1 when malformed. */
int subproto_split_words(const char *body, size_t n, char ***ret);
/* The payload of an 'S' frame, s[0..n): a signal number 1-64 in decimal, digits only, no
 * leading zero, sign, space or anything after (sub-signal-junk: "15x", " 15" and 2^32+15
 * were read as 15 by atoi).  -1 when it is anything else. */
int subproto_parse_signal(const char *s, size_t n);
/* Is `entry` (an egress allow entry, common/egress_grammar.h) covered by
 * one of `parent` (the parent's allowlist): the same or a narrower CIDR, a
 * name equal to the parent's or below its "*." wildcard, a port range
 * inside the parent's, the parent's protocol or any?  false when `entry`
 * does not parse. */
bool subproto_allow_covered(const char *entry, char *const *parent);

#endif
