/* mnl.c - the libmnl functions that libnftnl and the monitor's NFLOG reader
 * call, implemented here so that agentrt links statically (Debian ships
 * libmnl only as a shared library; README "Dependencies").
 *
 * The prototypes and constants are libmnl's own header
 * (<libmnl/libmnl.h>, from libmnl-dev), so libnftnl.a, compiled against
 * that header, calls these with the layout it expects.  Behaviour follows
 * libmnl's documentation: attributes are walked only while their length
 * fits what is left of the message, errors are reported through errno,
 * callbacks return MNL_CB_ERROR/STOP/OK.  tests/unit/test_mnl.c covers
 * truncated, overlong and zero-length attributes and messages.
 */
#include <errno.h>
#include <libmnl/libmnl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct mnl_socket {
  int fd;
  struct sockaddr_nl addr;
};

/* Sockets */

struct mnl_socket *mnl_socket_open2(int bus, int flags)
{
  struct mnl_socket *nl = calloc(1, sizeof *nl);

  if (nl == NULL)
    return NULL;
  nl->fd = socket(AF_NETLINK, SOCK_RAW | flags, bus);
  if (nl->fd < 0) {
    int e = errno;
    free(nl);
    errno = e;
    return NULL;
  }
  return nl;
}

struct mnl_socket *mnl_socket_open(int bus)
{
  return mnl_socket_open2(bus, 0);
}

struct mnl_socket *mnl_socket_fdopen(int fd)
{
  struct sockaddr_nl addr = {0};
  socklen_t len = sizeof addr;
  struct mnl_socket *nl;

  if (getsockname(fd, (struct sockaddr *)&addr, &len) < 0)
    return NULL;
  nl = calloc(1, sizeof *nl);
  if (nl == NULL)
    return NULL;
  nl->fd = fd;
  if (addr.nl_family == AF_NETLINK)
    nl->addr = addr;
  else
    nl->addr.nl_family = AF_UNSPEC;
  return nl;
}

int mnl_socket_bind(struct mnl_socket *nl, unsigned int groups, pid_t pid)
{
  socklen_t len = sizeof nl->addr;

  nl->addr = (struct sockaddr_nl){.nl_family = AF_NETLINK, .nl_groups = groups, .nl_pid = pid};
  if (bind(nl->fd, (struct sockaddr *)&nl->addr, sizeof nl->addr) < 0)
    return -1;
  if (getsockname(nl->fd, (struct sockaddr *)&nl->addr, &len) < 0)
    return -1;
  if (len != sizeof nl->addr || nl->addr.nl_family != AF_NETLINK) {
    errno = EINVAL;
    return -1;
  }
  return 0;
}

int mnl_socket_close(struct mnl_socket *nl)
{
  int r = close(nl->fd);

  free(nl);
  return r;
}

int mnl_socket_get_fd(const struct mnl_socket *nl)
{
  return nl->fd;
}

unsigned int mnl_socket_get_portid(const struct mnl_socket *nl)
{
  return nl->addr.nl_pid;
}

ssize_t mnl_socket_sendto(const struct mnl_socket *nl, const void *req, size_t siz)
{
  static const struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};

  return sendto(nl->fd, req, siz, 0, (const struct sockaddr *)&kernel, sizeof kernel);
}

ssize_t mnl_socket_recvfrom(const struct mnl_socket *nl, void *buf, size_t siz)
{
  struct sockaddr_nl from;
  struct iovec iov = {.iov_base = buf, .iov_len = siz};
  struct msghdr msg = {
      .msg_name = &from, .msg_namelen = sizeof from, .msg_iov = &iov, .msg_iovlen = 1};
  ssize_t n = recvmsg(nl->fd, &msg, 0);

  if (n < 0)
    return n;
  if (msg.msg_flags & MSG_TRUNC) {
    errno = ENOSPC;
    return -1;
  }
  if (msg.msg_namelen != sizeof from) {
    errno = EINVAL;
    return -1;
  }
  return n;
}

int mnl_socket_setsockopt(const struct mnl_socket *nl, int type, void *buf, socklen_t len)
{
  return setsockopt(nl->fd, SOL_NETLINK, type, buf, len);
}

int mnl_socket_getsockopt(const struct mnl_socket *nl, int type, void *buf, socklen_t *len)
{
  return getsockopt(nl->fd, SOL_NETLINK, type, buf, len);
}

/* Messages */

size_t mnl_nlmsg_size(size_t len)
{
  return len + MNL_NLMSG_HDRLEN;
}

size_t mnl_nlmsg_get_payload_len(const struct nlmsghdr *nlh)
{
  return nlh->nlmsg_len - MNL_NLMSG_HDRLEN;
}

struct nlmsghdr *mnl_nlmsg_put_header(void *buf)
{
  struct nlmsghdr *nlh = buf;

  memset(buf, 0, MNL_NLMSG_HDRLEN);
  nlh->nlmsg_len = MNL_NLMSG_HDRLEN;
  return nlh;
}

void *mnl_nlmsg_put_extra_header(struct nlmsghdr *nlh, size_t size)
{
  char *p = (char *)nlh + nlh->nlmsg_len;
  size_t len = MNL_ALIGN(size);

  nlh->nlmsg_len += len;
  memset(p, 0, len);
  return p;
}

void *mnl_nlmsg_get_payload(const struct nlmsghdr *nlh)
{
  return (char *)nlh + MNL_NLMSG_HDRLEN;
}

void *mnl_nlmsg_get_payload_offset(const struct nlmsghdr *nlh, size_t offset)
{
  return (char *)nlh + MNL_NLMSG_HDRLEN + MNL_ALIGN(offset);
}

void *mnl_nlmsg_get_payload_tail(const struct nlmsghdr *nlh)
{
  return (char *)nlh + MNL_ALIGN(nlh->nlmsg_len);
}

bool mnl_nlmsg_ok(const struct nlmsghdr *nlh, int len)
{
  /* compared unsigned: a length of 2^31 or more is not negative */
  return len >= (int)sizeof *nlh && nlh->nlmsg_len >= sizeof *nlh &&
         nlh->nlmsg_len <= (unsigned)len;
}

struct nlmsghdr *mnl_nlmsg_next(const struct nlmsghdr *nlh, int *len)
{
  *len -= (int)MNL_ALIGN(nlh->nlmsg_len);
  return (struct nlmsghdr *)((char *)nlh + MNL_ALIGN(nlh->nlmsg_len));
}

bool mnl_nlmsg_seq_ok(const struct nlmsghdr *nlh, unsigned int seq)
{
  return nlh->nlmsg_seq == 0 || seq == 0 || nlh->nlmsg_seq == seq;
}

bool mnl_nlmsg_portid_ok(const struct nlmsghdr *nlh, unsigned int portid)
{
  return nlh->nlmsg_pid == 0 || portid == 0 || nlh->nlmsg_pid == portid;
}

/* Batches: messages laid one after another in the caller's buffer; next()
 * refuses (and remembers) the message that would pass the limit. */

struct mnl_nlmsg_batch {
  char *buf;
  size_t limit;
  size_t len;
  char *cur;
  bool overflow;
};

struct mnl_nlmsg_batch *mnl_nlmsg_batch_start(void *buf, size_t limit)
{
  struct mnl_nlmsg_batch *b = malloc(sizeof *b);

  if (b == NULL)
    return NULL;
  *b = (struct mnl_nlmsg_batch){.buf = buf, .limit = limit, .cur = buf};
  return b;
}

void mnl_nlmsg_batch_stop(struct mnl_nlmsg_batch *b)
{
  free(b);
}

bool mnl_nlmsg_batch_next(struct mnl_nlmsg_batch *b)
{
  const struct nlmsghdr *nlh = (const struct nlmsghdr *)b->cur;

  if (b->len + nlh->nlmsg_len > b->limit) {
    b->overflow = true;
    return false;
  }
  b->len += nlh->nlmsg_len;
  b->cur = b->buf + b->len;
  return true;
}

void mnl_nlmsg_batch_reset(struct mnl_nlmsg_batch *b)
{
  if (b->overflow) {
    const struct nlmsghdr *nlh = (const struct nlmsghdr *)b->cur;
    size_t len = nlh->nlmsg_len;

    memmove(b->buf, b->cur, len);
    b->len = len;
    b->cur = b->buf + len;
    b->overflow = false;
  } else {
    b->len = 0;
    b->cur = b->buf;
  }
}

size_t mnl_nlmsg_batch_size(struct mnl_nlmsg_batch *b)
{
  return b->len;
}

void *mnl_nlmsg_batch_head(struct mnl_nlmsg_batch *b)
{
  return b->buf;
}

void *mnl_nlmsg_batch_current(struct mnl_nlmsg_batch *b)
{
  return b->cur;
}

bool mnl_nlmsg_batch_is_empty(struct mnl_nlmsg_batch *b)
{
  return b->len == 0;
}

/* Attributes */

uint16_t mnl_attr_get_type(const struct nlattr *attr)
{
  return attr->nla_type & NLA_TYPE_MASK;
}

uint16_t mnl_attr_get_len(const struct nlattr *attr)
{
  return attr->nla_len;
}

uint16_t mnl_attr_get_payload_len(const struct nlattr *attr)
{
  return (uint16_t)(attr->nla_len - MNL_ATTR_HDRLEN);
}

void *mnl_attr_get_payload(const struct nlattr *attr)
{
  return (char *)attr + MNL_ATTR_HDRLEN;
}

bool mnl_attr_ok(const struct nlattr *attr, int len)
{
  return len >= (int)sizeof *attr && attr->nla_len >= sizeof *attr && (int)attr->nla_len <= len;
}

struct nlattr *mnl_attr_next(const struct nlattr *attr)
{
  return (struct nlattr *)((char *)attr + MNL_ALIGN(attr->nla_len));
}

int mnl_attr_type_valid(const struct nlattr *attr, uint16_t max)
{
  if (mnl_attr_get_type(attr) > max) {
    errno = EOPNOTSUPP;
    return -1;
  }
  return 1;
}

static int validate(const struct nlattr *attr, enum mnl_attr_data_type type, size_t exp_len)
{
  uint16_t len = mnl_attr_get_payload_len(attr);
  const char *data = mnl_attr_get_payload(attr);

  if (attr->nla_len < MNL_ATTR_HDRLEN || len < exp_len) {
    errno = ERANGE;
    return -1;
  }
  switch (type) {
  case MNL_TYPE_FLAG:
    if (len > 0) {
      errno = ERANGE;
      return -1;
    }
    break;
  case MNL_TYPE_NUL_STRING:
    if (len == 0) {
      errno = ERANGE;
      return -1;
    }
    if (data[len - 1] != '\0') {
      errno = EINVAL;
      return -1;
    }
    break;
  case MNL_TYPE_STRING:
    if (len == 0) {
      errno = ERANGE;
      return -1;
    }
    break;
  case MNL_TYPE_NESTED:
    if (len != 0 && len < MNL_ATTR_HDRLEN) {
      errno = ERANGE;
      return -1;
    }
    break;
  default:
    break;
  }
  if (exp_len != 0 && len > exp_len) {
    errno = ERANGE;
    return -1;
  }
  return 0;
}

int mnl_attr_validate(const struct nlattr *attr, enum mnl_attr_data_type type)
{
  static const size_t fixed[MNL_TYPE_MAX] = {
      [MNL_TYPE_U8] = 1,  [MNL_TYPE_U16] = 2,   [MNL_TYPE_U32] = 4,
      [MNL_TYPE_U64] = 8, [MNL_TYPE_MSECS] = 8,
  };

  if ((unsigned)type >= MNL_TYPE_MAX) {
    errno = EINVAL;
    return -1;
  }
  return validate(attr, type, fixed[type]);
}

int mnl_attr_validate2(const struct nlattr *attr, enum mnl_attr_data_type type, size_t exp_len)
{
  if ((unsigned)type >= MNL_TYPE_MAX) {
    errno = EINVAL;
    return -1;
  }
  return validate(attr, type, exp_len);
}

int mnl_attr_parse_payload(const void *payload, size_t payload_len, mnl_attr_cb_t cb, void *data)
{
  const struct nlattr *attr = payload;
  const char *end = (const char *)payload + payload_len;
  int r = MNL_CB_OK;

  while (mnl_attr_ok(attr, (int)(end - (const char *)attr))) {
    r = cb(attr, data);
    if (r <= MNL_CB_STOP)
      return r;
    attr = mnl_attr_next(attr);
  }
  return r;
}

int mnl_attr_parse(const struct nlmsghdr *nlh, unsigned int offset, mnl_attr_cb_t cb, void *data)
{
  const char *start = mnl_nlmsg_get_payload_offset(nlh, offset);
  /* nlmsg_len itself, not aligned up: a message whose length is not a
   * multiple of 4 does not lend its attributes the bytes after it */
  const char *end = (const char *)nlh + nlh->nlmsg_len;

  if (end < start) /* the message is shorter than its own extra header */
    return MNL_CB_OK;
  return mnl_attr_parse_payload(start, (size_t)(end - start), cb, data);
}

int mnl_attr_parse_nested(const struct nlattr *nested, mnl_attr_cb_t cb, void *data)
{
  if (nested->nla_len < MNL_ATTR_HDRLEN)
    return MNL_CB_OK;
  return mnl_attr_parse_payload(mnl_attr_get_payload(nested), mnl_attr_get_payload_len(nested), cb,
                                data);
}

uint8_t mnl_attr_get_u8(const struct nlattr *attr)
{
  return *(const uint8_t *)mnl_attr_get_payload(attr);
}

uint16_t mnl_attr_get_u16(const struct nlattr *attr)
{
  uint16_t v;

  memcpy(&v, mnl_attr_get_payload(attr), sizeof v);
  return v;
}

uint32_t mnl_attr_get_u32(const struct nlattr *attr)
{
  uint32_t v;

  memcpy(&v, mnl_attr_get_payload(attr), sizeof v);
  return v;
}

uint64_t mnl_attr_get_u64(const struct nlattr *attr)
{
  uint64_t v;

  memcpy(&v, mnl_attr_get_payload(attr), sizeof v);
  return v;
}

const char *mnl_attr_get_str(const struct nlattr *attr)
{
  return mnl_attr_get_payload(attr);
}

void mnl_attr_put(struct nlmsghdr *nlh, uint16_t type, size_t len, const void *data)
{
  struct nlattr *attr = mnl_nlmsg_get_payload_tail(nlh);
  size_t total = MNL_ATTR_HDRLEN + len;
  char *payload = (char *)attr + MNL_ATTR_HDRLEN;

  attr->nla_type = type;
  attr->nla_len = (uint16_t)total;
  if (len > 0)
    memcpy(payload, data, len);
  if (MNL_ALIGN(len) > len)
    memset(payload + len, 0, MNL_ALIGN(len) - len);
  nlh->nlmsg_len += MNL_ALIGN(total);
}

void mnl_attr_put_u8(struct nlmsghdr *nlh, uint16_t type, uint8_t data)
{
  mnl_attr_put(nlh, type, sizeof data, &data);
}

void mnl_attr_put_u16(struct nlmsghdr *nlh, uint16_t type, uint16_t data)
{
  mnl_attr_put(nlh, type, sizeof data, &data);
}

void mnl_attr_put_u32(struct nlmsghdr *nlh, uint16_t type, uint32_t data)
{
  mnl_attr_put(nlh, type, sizeof data, &data);
}

void mnl_attr_put_u64(struct nlmsghdr *nlh, uint16_t type, uint64_t data)
{
  mnl_attr_put(nlh, type, sizeof data, &data);
}

void mnl_attr_put_str(struct nlmsghdr *nlh, uint16_t type, const char *data)
{
  mnl_attr_put(nlh, type, strlen(data), data);
}

void mnl_attr_put_strz(struct nlmsghdr *nlh, uint16_t type, const char *data)
{
  mnl_attr_put(nlh, type, strlen(data) + 1, data);
}

/* The _check variants put nothing and return false when the attribute
 * would end past buflen bytes from the start of the message. */
bool mnl_attr_put_check(struct nlmsghdr *nlh, size_t buflen, uint16_t type, size_t len,
                        const void *data)
{
  if (len > UINT16_MAX - MNL_ATTR_HDRLEN || nlh->nlmsg_len > buflen ||
      MNL_ALIGN(len) + MNL_ATTR_HDRLEN > buflen - nlh->nlmsg_len)
    return false;
  mnl_attr_put(nlh, type, len, data);
  return true;
}

bool mnl_attr_put_u8_check(struct nlmsghdr *nlh, size_t buflen, uint16_t type, uint8_t data)
{
  return mnl_attr_put_check(nlh, buflen, type, sizeof data, &data);
}

bool mnl_attr_put_u16_check(struct nlmsghdr *nlh, size_t buflen, uint16_t type, uint16_t data)
{
  return mnl_attr_put_check(nlh, buflen, type, sizeof data, &data);
}

bool mnl_attr_put_u32_check(struct nlmsghdr *nlh, size_t buflen, uint16_t type, uint32_t data)
{
  return mnl_attr_put_check(nlh, buflen, type, sizeof data, &data);
}

bool mnl_attr_put_u64_check(struct nlmsghdr *nlh, size_t buflen, uint16_t type, uint64_t data)
{
  return mnl_attr_put_check(nlh, buflen, type, sizeof data, &data);
}

bool mnl_attr_put_str_check(struct nlmsghdr *nlh, size_t buflen, uint16_t type, const char *data)
{
  return mnl_attr_put_check(nlh, buflen, type, strlen(data), data);
}

bool mnl_attr_put_strz_check(struct nlmsghdr *nlh, size_t buflen, uint16_t type, const char *data)
{
  return mnl_attr_put_check(nlh, buflen, type, strlen(data) + 1, data);
}

struct nlattr *mnl_attr_nest_start(struct nlmsghdr *nlh, uint16_t type)
{
  struct nlattr *start = mnl_nlmsg_get_payload_tail(nlh);

  start->nla_type = NLA_F_NESTED | type;
  start->nla_len = MNL_ATTR_HDRLEN;
  nlh->nlmsg_len += MNL_ATTR_HDRLEN;
  return start;
}

struct nlattr *mnl_attr_nest_start_check(struct nlmsghdr *nlh, size_t buflen, uint16_t type)
{
  if (nlh->nlmsg_len > buflen || MNL_ATTR_HDRLEN > buflen - nlh->nlmsg_len)
    return NULL;
  return mnl_attr_nest_start(nlh, type);
}

void mnl_attr_nest_end(struct nlmsghdr *nlh, struct nlattr *start)
{
  start->nla_len = (uint16_t)((char *)mnl_nlmsg_get_payload_tail(nlh) - (char *)start);
}

void mnl_attr_nest_cancel(struct nlmsghdr *nlh, struct nlattr *start)
{
  nlh->nlmsg_len -= (uint32_t)((char *)mnl_nlmsg_get_payload_tail(nlh) - (char *)start);
}

/* Callbacks */

static int cb_error(const struct nlmsghdr *nlh)
{
  const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);

  if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof *e)) {
    errno = EBADMSG;
    return MNL_CB_ERROR;
  }
  /* subsystems report the error with either sign */
  errno = e->error < 0 ? -e->error : e->error;
  return e->error == 0 ? MNL_CB_STOP : MNL_CB_ERROR;
}

static int cb_control(const struct nlmsghdr *nlh, void *data, const mnl_cb_t *ctl, unsigned nctl)
{
  if (ctl != NULL && nlh->nlmsg_type < nctl && ctl[nlh->nlmsg_type] != NULL)
    return ctl[nlh->nlmsg_type](nlh, data);
  switch (nlh->nlmsg_type) {
  case NLMSG_ERROR:
    return cb_error(nlh);
  case NLMSG_DONE:
    return MNL_CB_STOP;
  default: /* NLMSG_NOOP, NLMSG_OVERRUN, and the reserved types below 16 */
    return MNL_CB_OK;
  }
}

int mnl_cb_run2(const void *buf, size_t numbytes, unsigned int seq, unsigned int portid,
                mnl_cb_t cb_data, void *data, mnl_cb_t *cb_ctl_array, unsigned int cb_ctl_array_len)
{
  const struct nlmsghdr *nlh = buf;
  int len = numbytes > (size_t)INT32_MAX ? INT32_MAX : (int)numbytes;
  int r = MNL_CB_OK;

  while (mnl_nlmsg_ok(nlh, len)) {
    if (!mnl_nlmsg_portid_ok(nlh, portid)) {
      errno = ESRCH;
      return -1;
    }
    if (!mnl_nlmsg_seq_ok(nlh, seq)) {
      errno = EPROTO;
      return -1;
    }
    if (nlh->nlmsg_flags & NLM_F_DUMP_INTR) {
      errno = EINTR;
      return -1;
    }
    if (nlh->nlmsg_type >= NLMSG_MIN_TYPE) {
      if (cb_data != NULL) {
        r = cb_data(nlh, data);
        if (r <= MNL_CB_STOP)
          return r;
      }
    } else {
      r = cb_control(nlh, data, cb_ctl_array, cb_ctl_array_len);
      if (r <= MNL_CB_STOP)
        return r;
    }
    nlh = mnl_nlmsg_next(nlh, &len);
  }
  return r;
}

int mnl_cb_run(const void *buf, size_t numbytes, unsigned int seq, unsigned int portid,
               mnl_cb_t cb_data, void *data)
{
  return mnl_cb_run2(buf, numbytes, seq, portid, cb_data, data, NULL, 0);
}
