/* A function in a shared library that calls.c links with. */
int shared_add(int a, int b);
