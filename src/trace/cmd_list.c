/* `trace list-providers` and `trace list-categories`: ask the running trace
 * manager (GetProviders; GetKnownCategories grouped by provider). The
 * categories of the kernel provider `trace record` starts on demand are
 * listed too when no kernel provider is registered (record_kernel.h). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/manager_socket.h"
#include "trace/cli.h"
#include "trace/controller.h"
#include "trace/local_manager.h"
#include "trace/manager_connect.h"
#include "trace/record_kernel.h"
#include "trace/text_escape.h"

static const char kProvidersUsage[] =
    "Usage: trace list-providers\n"
    "\n"
    "Lists the providers registered with the running trace manager: id, process id\n"
    "and name, one per line. The manager's socket is FXTRACE_SOCKET if set, else\n"
    "$XDG_RUNTIME_DIR/fxtrace/manager.sock, /run/fxtrace/manager.sock (root) or\n"
    "/tmp/fxtrace-$UID/manager.sock.\n"
    "\n"
    "Exit status: 0 on success, 1 if no manager is running or it fails to answer,\n"
    "2 on a usage error.\n";

static const char kCategoriesUsage[] =
    "Usage: trace list-categories\n"
    "\n"
    "Lists the categories the running trace manager knows, per provider: a heading\n"
    "for each source (the manager's own configuration, then each registered\n"
    "provider: name, id, process id), then one indented line per category with\n"
    "its description. A provider that does not answer within 1 s is marked so.\n"
    "When no kernel provider is registered (or no manager is running, so that\n"
    "'trace record' would run one of its own), a last heading lists the kernel\n"
    "categories (kernel:sched, ...) of the kernel provider 'trace record' starts\n"
    "on demand (it needs root). The manager's socket is found as for\n"
    "'trace list-providers'.\n"
    "\n"
    "Exit status: 0 on success, 1 if no manager is running (the kernel categories\n"
    "are still listed) or it fails to answer, 2 on a usage error.\n";

int cmd__list_providers(int argc, char** argv) {
  static const char kCmd[] = "list-providers";
  int first;
  int rc = cli__parse_help_only(kCmd, kProvidersUsage, argc, argv, 0, "", &first);
  if (rc != 0) return rc < 0 ? EXIT_OK : rc;
  controller_t c;
  if (manager_connect__controller(kCmd, &c) != 0) return EXIT_FAILED;
  controller_provider_t* list;
  size_t count;
  rc = EXIT_OK;
  if (controller__get_providers(&c, &list, &count) != 0) {
    cli__error(kCmd, "%s", c.error);
    rc = EXIT_FAILED;
  } else {
    printf("%-6s %-10s %s\n", "ID", "PID", "NAME");
    for (size_t i = 0; i < count; i++) {
      char name[TEXT_ESCAPED_SIZE(WIRE_MAX_NAME)]; /* a provider's own: escaped */
      printf("%-6u %-10llu %s\n", (unsigned)list[i].id, (unsigned long long)list[i].pid,
             text__escaped(list[i].name, name, sizeof(name)));
    }
    if (count == 0) fprintf(stderr, "trace %s: no provider is registered\n", kCmd);
    free(list);
  }
  controller__close(&c);
  if (fflush(stdout) != 0) rc = EXIT_FAILED;
  return rc;
}

/* One group: a heading naming who declared the categories, then one
 * indented line per category (name, description). */
static void print_group(const controller_category_group_t* g, int width) {
  /* names and descriptions come from the providers: escaped */
  static char name[TEXT_ESCAPED_SIZE(WIRE_MAX_NAME)];
  static char description[TEXT_ESCAPED_SIZE(WIRE_MAX_DESCRIPTION)];
  text__escaped(g->name, name, sizeof(name));
  if (g->provider_id == 0)
    printf("%s (pid %llu): the manager's configuration\n", name, (unsigned long long)g->pid);
  else
    printf("%s (provider %u, pid %llu)%s\n", name, (unsigned)g->provider_id,
           (unsigned long long)g->pid, g->answered ? "" : ": did not answer");
  for (size_t i = 0; i < g->count; i++) {
    text__escaped(g->categories[i].name, name, sizeof(name));
    if (g->categories[i].description[0])
      printf("  %-*s  %s\n", width, name,
             text__escaped(g->categories[i].description, description, sizeof(description)));
    else
      printf("  %s\n", name);
  }
  if (g->count == 0 && g->answered) printf("  (no known categories)\n");
}

/* ---- the kernel provider trace record starts on demand ---- */

/* Whether the groups include a registered kernel provider (answering or
 * not): trace record starts its own only when none is (record_kernel.c). */
static bool kernel_provider_registered(const controller_category_group_t* groups, size_t count) {
  const char* name = record_kernel__provider_name();
  for (size_t i = 0; name && i < count; i++)
    if (groups[i].provider_id != 0 && strcmp(groups[i].name, name) == 0) return true;
  return false;
}

/* How many categories the on-demand kernel provider serves (0 without
 * libtracefs); widens *width to their names. */
static size_t kernel_categories(int* width) {
  const char *name, *description;
  size_t i = 0;
  for (; record_kernel__category(i, &name, &description); i++)
    if ((int)strlen(name) > *width) *width = (int)strlen(name);
  return i;
}

/* A group of its own, after the manager's: its heading says that nothing
 * has registered these and who serves them. */
static void print_kernel_group(int width) {
  const char *name, *description;
  if (!record_kernel__category(0, &name, &description)) return;
  printf(
      "%s (not running): trace record starts it on demand for kernel:* categories "
      "(needs root)\n",
      record_kernel__provider_name());
  for (size_t i = 0; record_kernel__category(i, &name, &description); i++)
    printf("  %-*s  %s\n", width, name, description);
}

/* No manager answers: trace record would run one of its own (when nothing
 * listens and trace has the in-process manager), and a kernel provider in
 * it, so the kernel categories are listed; the exit status stays 1. */
static int list_without_manager(int status) {
  int width = 8;
  if ((status == -ENOENT || status == -ECONNREFUSED) && local_manager__available() &&
      kernel_categories(&width) > 0)
    print_kernel_group(width > 40 ? 40 : width);
  fflush(stdout);
  return EXIT_FAILED;
}

/* The manager's groups, then the on-demand kernel provider's when none of
 * them is a kernel provider. */
static void print_groups(const controller_category_group_t* groups, size_t count) {
  int width = 8;
  size_t total = 0;
  for (size_t i = 0; i < count; i++) {
    total += groups[i].count;
    for (size_t k = 0; k < groups[i].count; k++)
      if ((int)strlen(groups[i].categories[k].name) > width)
        width = (int)strlen(groups[i].categories[k].name);
  }
  bool kernel = !kernel_provider_registered(groups, count);
  if (kernel) total += kernel_categories(&width);
  if (width > 40) width = 40;
  for (size_t i = 0; i < count; i++) print_group(&groups[i], width);
  if (kernel) print_kernel_group(width);
  if (total == 0) fprintf(stderr, "trace list-categories: no category is known\n");
}

int cmd__list_categories(int argc, char** argv) {
  static const char kCmd[] = "list-categories";
  int first;
  int rc = cli__parse_help_only(kCmd, kCategoriesUsage, argc, argv, 0, "", &first);
  if (rc != 0) return rc < 0 ? EXIT_OK : rc;
  controller_t c;
  int status = manager_connect__controller(kCmd, &c);
  if (status != 0) return list_without_manager(status);
  controller_category_group_t* groups;
  size_t count;
  rc = EXIT_OK;
  if (controller__get_provider_categories(&c, &groups, &count) != 0) {
    cli__error(kCmd, "%s", c.error);
    rc = EXIT_FAILED;
  } else {
    print_groups(groups, count);
    controller__free_category_groups(groups, count);
  }
  controller__close(&c);
  if (fflush(stdout) != 0) rc = EXIT_FAILED;
  return rc;
}
