/* home.c - the home's deny list for `agentrt sandbox`: what of a user's home
 * is never bound into a sandbox, whatever sandbox.home or --dotfile say.
 *
 * Two kinds of rule, both without regard to case (a case-folding file system,
 * or a planted `.SSH`, must not get around them):
 *   paths     an entry and everything below it (".ssh", ".config/gcloud"),
 *             matched on whole components of the path relative to the home;
 *   names     fnmatch(3) patterns for the last component, anywhere below the
 *             home ("id_rsa*", "*_history", "credentials"): a key copied into
 *             .config/foo is still a key.
 * Pure string work: the sandbox (cli/sandbox.c) applies it to the path it
 * was asked for and to the path the opened file really has.
 */
#include <fnmatch.h>
#include <string.h>
#include <strings.h>

#include "profile/profile.h"

#include "common/util.h"

const char *const profile_home_deny_builtin[] = {
    /* keys and credential stores */
    ".ssh",
    ".gnupg",
    ".password-store",
    ".pki",
    ".local/share/keyrings",
    ".config/op",
    ".op",
    ".vault-token",
    ".netrc",
    ".authinfo",
    ".authinfo.gpg",
    ".git-credentials",
    ".config/git/credentials",
    ".config/gh",
    ".config/hub",
    ".config/glab-cli",
    /* cloud and cluster credentials */
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".oci",
    ".config/doctl",
    ".config/hcloud",
    ".config/rclone",
    ".s3cfg",
    ".boto",
    ".terraform.d",
    ".bluemix",
    ".kaggle",
    ".huggingface",
    ".cache/huggingface",
    /* registry credentials (tokens live in these) */
    ".docker",
    ".config/containers/auth.json",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".m2/settings.xml",
    ".m2/settings-security.xml",
    ".gradle/gradle.properties",
    ".nuget",
    ".composer/auth.json",
    ".config/composer/auth.json",
    ".pgpass",
    ".my.cnf",
    /* browser and mail profiles */
    ".mozilla",
    ".thunderbird",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
    ".config/microsoft-edge",
    ".config/vivaldi",
    ".config/opera",
    ".var/app",
    "snap",
    /* shell and REPL histories */
    ".bash_history",
    ".zsh_history",
    ".zhistory",
    ".histfile",
    ".sh_history",
    ".python_history",
    ".node_repl_history",
    ".local/share/fish",
    ".lesshst",
    ".viminfo",
    ".psql_history",
    ".mysql_history",
    ".sqlite_history",
    ".rediscli_history",
    ".irb_history",
    ".Rhistory",
    /* agentrt's own data: other sandboxes' workspaces and trails */
    ".local/share/agentrt",
    NULL,
};

static const char *const deny_names[] = {
    "id_rsa*",   "id_dsa*",      "id_ecdsa*", "id_ed25519*", "*.ppk",
    "*_history", "*history.txt", ".histfile", ".netrc",      ".git-credentials",
    ".npmrc",    ".pypirc",      ".pgpass",   "credentials", "credentials.*",
    "auth.json", ".env",         ".env.*",    "*.keystore",  "*.jks",
    "*.p12",     "*.pfx",        "token",     NULL,
};

char *profile_home_normalize(const char *rel)
{
  cleanup_free char *copy = NULL;
  cleanup_free char *out = NULL;
  size_t len = 0;

  if (rel == NULL || rel[0] == '\0' || rel[0] == '/' || strlen(rel) > 4096)
    return NULL;
  copy = xstrdup(rel);
  out = xmalloc(strlen(rel) + 1);
  for (char *save = NULL, *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
    size_t n = strlen(c);
    if (streq(c, "."))
      continue;
    if (streq(c, ".."))
      return NULL;
    if (len > 0)
      out[len++] = '/';
    memcpy(out + len, c, n);
    len += n;
  }
  if (len == 0)
    return NULL;
  out[len] = '\0';
  return take_ptr(out);
}

/* entry's components are a prefix of rel's (both normalised), ignoring case */
static bool under_entry(const char *rel, const char *entry)
{
  size_t n = strlen(entry);

  while (n > 0 && entry[n - 1] == '/')
    n--;
  if (n == 0 || strncasecmp(rel, entry, n) != 0)
    return false;
  return rel[n] == '\0' || rel[n] == '/';
}

/* normalised: the list's entries are in normal form already (the built-in
 * one is: test_profile checks each against profile_home_normalize) */
static const char *denied_by_list(const char *rel, const char *const *list, bool normalised)
{
  for (size_t i = 0; list != NULL && list[i] != NULL; i++) {
    cleanup_free char *e = normalised ? NULL : profile_home_normalize(list[i]);
    const char *entry = normalised ? list[i] : e;
    if (entry != NULL && under_entry(rel, entry))
      return list[i];
  }
  return NULL;
}

const char *profile_home_denied(const char *rel, char *const *extra)
{
  cleanup_free char *n = profile_home_normalize(rel);
  const char *why;

  if (n == NULL)
    return "(not a path inside the home)";
  if ((why = denied_by_list(n, profile_home_deny_builtin, true)) != NULL ||
      (why = denied_by_list(n, (const char *const *)extra, false)) != NULL)
    return why;
  /* every component's name, not only the last: a directory called
   * `credentials` is as telling as a file */
  for (char *save = NULL, *c = strtok_r(n, "/", &save); c; c = strtok_r(NULL, "/", &save))
    for (size_t i = 0; deny_names[i] != NULL; i++)
      if (fnmatch(deny_names[i], c, FNM_CASEFOLD) == 0)
        return deny_names[i];
  return NULL;
}
