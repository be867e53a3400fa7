/* test_tp_compile.sh: links with tp_bad.c objects. */
int tp_bad_user(void);
int main(void) { return tp_bad_user() != 0; }
