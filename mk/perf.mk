# perf.mk - link the helper libraries statically where Debian ships an archive (issue 7).
#   make STATIC_LIBS=0   link libseccomp, yajl, libnftnl dynamically as before
# glibc (and libmnl, which has no .a in Debian) stay dynamic.  Static archives
# save the loader's work at every start (fewer mmap/openat, no symbol lookups
# across libraries) and the pages of the mapped libraries in RSS.
STATIC_LIBS ?= 1
ifeq ($(STATIC_LIBS),1)
# `gcc -print-file-name=libX.a` prints the bare name when there is no archive.
perf_static = $(foreach a,$(1),$(if $(filter /%,$(shell $(CC) -print-file-name=$(a))),$(shell $(CC) -print-file-name=$(a))))
perf_pairs := -lseccomp:libseccomp.a -lyajl:libyajl_s.a -lnftnl:libnftnl.a
perf_found := $(foreach p,$(perf_pairs),$(if $(call perf_static,$(word 2,$(subst :, ,$(p)))),$(p)))
PERF_STATIC_ARCHIVES := $(foreach p,$(perf_found),$(call perf_static,$(word 2,$(subst :, ,$(p)))))
LIBS := $(PERF_STATIC_ARCHIVES) $(filter-out $(foreach p,$(perf_found),$(word 1,$(subst :, ,$(p)))),$(PKG_LIBS))
endif
