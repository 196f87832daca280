set datafile separator ','
set datafile missing ''
set terminal pngcairo size 1600,650 noenhanced font ',10'
set output 'docs/figures/smooth-dist.png'
set logscale x
set xrange [0.07:140]
set xtics (0.1, 1, 10, 100)
set xlabel 'Rate (Gbit/s)'
set grid
set key outside right top vertical font ',8'
set multiplot layout 1,2 title 'smooth (solid) beside correlated (dashed) by distribution, jitter 3 ms'
unset logscale y
set ylabel 'Mean delay deviation (%)'
unset key
plot 'docs/figures/smooth-dist.csv' every ::1 using ((strcol(3) eq "normal" && strcol(2) eq "smooth") ? $4 * 0.9125 : 1/0):($12):(valid(13) ? $13 : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '#1b9e77' dt 1 title 'smooth, normal', \
     'docs/figures/smooth-dist.csv' every ::1 using ((strcol(3) eq "uniform" && strcol(2) eq "smooth") ? $4 * 0.9375 : 1/0):($12):(valid(13) ? $13 : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '#d95f02' dt 1 title 'smooth, uniform', \
     'docs/figures/smooth-dist.csv' every ::1 using ((strcol(3) eq "gamma" && strcol(2) eq "smooth") ? $4 * 0.9625 : 1/0):($12):(valid(13) ? $13 : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '#7570b3' dt 1 title 'smooth, gamma', \
     'docs/figures/smooth-dist.csv' every ::1 using ((strcol(3) eq "lognormal" && strcol(2) eq "smooth") ? $4 * 0.9875 : 1/0):($12):(valid(13) ? $13 : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '#e7298a' dt 1 title 'smooth, lognormal', \
     'docs/figures/smooth-dist.csv' every ::1 using ((strcol(3) eq "normal" && strcol(2) eq "correlated") ? $4 * 1.0125 : 1/0):($12):(valid(13) ? $13 : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '#1b9e77' dt 2 title 'correlated, normal', \
     'docs/figures/smooth-dist.csv' every ::1 using ((strcol(3) eq "uniform" && strcol(2) eq "correlated") ? $4 * 1.0375 : 1/0):($12):(valid(13) ? $13 : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '#d95f02' dt 2 title 'correlated, uniform', \
     'docs/figures/smooth-dist.csv' every ::1 using ((strcol(3) eq "gamma" && strcol(2) eq "correlated") ? $4 * 1.0625 : 1/0):($12):(valid(13) ? $13 : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '#7570b3' dt 2 title 'correlated, gamma', \
     'docs/figures/smooth-dist.csv' every ::1 using ((strcol(3) eq "lognormal" && strcol(2) eq "correlated") ? $4 * 1.0875 : 1/0):($12):(valid(13) ? $13 : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '#e7298a' dt 2 title 'correlated, lognormal'
unset logscale y
set ylabel 'Jitter deviation (%)'
set key
plot 'docs/figures/smooth-dist.csv' every ::1 using ((strcol(3) eq "normal" && strcol(2) eq "smooth") ? $4 * 0.9125 : 1/0):($16):(valid(17) ? $17 : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '#1b9e77' dt 1 title 'smooth, normal', \
     'docs/figures/smooth-dist.csv' every ::1 using ((strcol(3) eq "uniform" && strcol(2) eq "smooth") ? $4 * 0.9375 : 1/0):($16):(valid(17) ? $17 : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '#d95f02' dt 1 title 'smooth, uniform', \
     'docs/figures/smooth-dist.csv' every ::1 using ((strcol(3) eq "gamma" && strcol(2) eq "smooth") ? $4 * 0.9625 : 1/0):($16):(valid(17) ? $17 : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '#7570b3' dt 1 title 'smooth, gamma', \
     'docs/figures/smooth-dist.csv' every ::1 using ((strcol(3) eq "lognormal" && strcol(2) eq "smooth") ? $4 * 0.9875 : 1/0):($16):(valid(17) ? $17 : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '#e7298a' dt 1 title 'smooth, lognormal', \
     'docs/figures/smooth-dist.csv' every ::1 using ((strcol(3) eq "normal" && strcol(2) eq "correlated") ? $4 * 1.0125 : 1/0):($16):(valid(17) ? $17 : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '#1b9e77' dt 2 title 'correlated, normal', \
     'docs/figures/smooth-dist.csv' every ::1 using ((strcol(3) eq "uniform" && strcol(2) eq "correlated") ? $4 * 1.0375 : 1/0):($16):(valid(17) ? $17 : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '#d95f02' dt 2 title 'correlated, uniform', \
     'docs/figures/smooth-dist.csv' every ::1 using ((strcol(3) eq "gamma" && strcol(2) eq "correlated") ? $4 * 1.0625 : 1/0):($16):(valid(17) ? $17 : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '#7570b3' dt 2 title 'correlated, gamma', \
     'docs/figures/smooth-dist.csv' every ::1 using ((strcol(3) eq "lognormal" && strcol(2) eq "correlated") ? $4 * 1.0875 : 1/0):($16):(valid(17) ? $17 : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '#e7298a' dt 2 title 'correlated, lognormal'
unset multiplot
