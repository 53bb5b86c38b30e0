// SPDX-License-Identifier: MIT
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.Random;

/*
 * tests/accuracy/jvm-perfmap.sh's workload: five phases (sorts of int,
 * long and double arrays, strings, a HashMap), each a fifth of ARGS[0]
 * seconds of the main thread's CPU, so that methods are compiled between
 * the map's rewrites and land amid the earlier ones (the code cache's
 * profiled and non-profiled heaps); prints "done", then idles until
 * the file ARGS[1] exists (so a last `jcmd PID Compiler.perfmap` sees every
 * method that ran).
 */
public class SaJit {
	static long fill(int[] a, Random r) {
		for (int i = 0; i < a.length; i++)
			a[i] = r.nextInt();
		return a.length;
	}

	static long work(int[] a, Random r) {
		fill(a, r);
		Arrays.sort(a);
		return a[a.length / 2];
	}

	static long phase(int k, int[] a, Random r) {
		switch (k) {
		case 0:
			return work(a, r);
		case 1: {
			long[] l = new long[a.length];
			for (int i = 0; i < l.length; i++)
				l[i] = r.nextLong();
			Arrays.sort(l);
			return l[l.length / 2];
		}
		case 2: {
			double[] d = new double[a.length];
			for (int i = 0; i < d.length; i++)
				d[i] = r.nextDouble();
			Arrays.sort(d);
			return (long)(d[d.length / 2] * 1e9);
		}
		case 3: {
			StringBuilder b = new StringBuilder();
			for (int i = 0; i < 2000; i++)
				b.append(Integer.toHexString(r.nextInt()));
			return b.toString().hashCode();
		}
		default: {
			java.util.HashMap<Integer, Integer> m = new java.util.HashMap<>();
			for (int i = 0; i < 5000; i++)
				m.merge(r.nextInt(997), 1, Integer::sum);
			return m.size();
		}
		}
	}

	public static void main(String[] args) throws Exception {
		ThreadMXBean tb = ManagementFactory.getThreadMXBean();
		long t0 = tb.getCurrentThreadCpuTime(), used;
		long total = (long)(Double.parseDouble(args[0]) * 1e9);
		int[] a = new int[20000];
		Random r = new Random(1);
		long s = 0;

		/* five phases, each compiling methods of its own after the maps before */
		while ((used = tb.getCurrentThreadCpuTime() - t0) < total)
			for (int i = 0; i < 16; i++)
				s += phase((int)(used * 5 / total), a, r);
		System.out.println("done " + s);
		while (!Files.exists(Paths.get(args[1])))
			Thread.sleep(20);
	}
}
