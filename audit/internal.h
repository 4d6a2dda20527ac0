/* internal.h - shared between the files of audit/ (not a public interface). */
#ifndef AGENTRT_AUDIT_INTERNAL_H
#define AGENTRT_AUDIT_INTERNAL_H

#include "audit/audit.h"
#include "common/sha256.h"

#define AUDIT_FILE_NAME_MAX 32
/* "%020 %64 %020 %020 %020\n" */
#define AUDIT_HEAD_LEN (20 + 1 + 64 + 1 + 20 + 1 + 20 + 1 + 20 + 1)
/* ,"hash":"<64 hex>"} */
#define AUDIT_HASH_SUFFIX_LEN (9 + SHA256_HEX_LEN + 2)
/* ,"prev":"<64 hex>" */
#define AUDIT_PREV_LEN (9 + SHA256_HEX_LEN + 1)

struct audit_head {
  uint64_t seq; /* last record written, 0 = none */
  char hash[SHA256_HEX_LEN + 1];
  uint64_t cur; /* first seq of the file being appended to, 0 = none */
  struct audit_limits lim;
};

int audit_head_read(int fd, struct audit_head *h, struct error *err);
void audit_file_name(uint64_t first_seq, char buf[AUDIT_FILE_NAME_MAX]);
/* What one prune removed: records from..to, in files. */
struct audit_dropped {
  uint64_t from, to, bytes;
  size_t files;
};
/* Remove rotated files beyond the size/age/count limits (never `current`,
 * never the first file of the trail).  true when it removed any. */
bool audit_prune(int dirfd, const struct audit_limits *lim, uint64_t current,
                 struct audit_dropped *ret);
/* Size at which the trail's first file (seq 1, kept) is rotated. */
uint64_t audit_pin_max(const struct audit_limits *lim);
/* Size at which a file is rotated (a quarter of max_size, 1 KiB..64 MiB). */
uint64_t audit_file_max(const struct audit_limits *lim);
/* Every string and key of a parsed record: the bytes jb_quote wrote as
 * \uDC80..\uDCFF (not UTF-8) back to the bytes (jb_bytes_unescape). */
struct yajl_val_s;
void audit_tree_bytes(struct yajl_val_s *v);
/* seq of a record line ({"seq":N,...), 0 when malformed. */
uint64_t audit_line_seq(const char *line, size_t len);

#endif
