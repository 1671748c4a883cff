// C++, instrumented by test_instrument: the converter shows demangled names.
#include <ticktrace.h>

namespace shapes {
struct Circle {
	double r;
	__attribute__((noinline)) double area() const { return 3.0 * r * r; }
};

template <typename T> __attribute__((noinline)) T twice(T x)
{
	return x + x;
}

__attribute__((noinline)) double total(const Circle &c)
{
	return twice(c.area());
}
} // namespace shapes

int main()
{
	shapes::Circle c{2.0};
	volatile double v = shapes::total(c);
	return v == 24.0 ? 0 : 1;
}
